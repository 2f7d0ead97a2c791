// Video tracks in the MOT Challenge layout: per task `<task_id>/gt/gt.txt` (a row per box of a
// track in a frame: `frame, id, left, top, width, height, 1, -1, -1, -1`, frames counted from 1,
// track ids from 1 in the response's order) and `<task_id>/seqinfo.ini`.
import type { Json, Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FolderEntry, FormatContext } from './format.ts';

const two = (n: number) => Number(n.toFixed(2));

async function* mot(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<FolderEntry> {
  for await (const task of tasks) {
    const r = task.response as Json | null;
    if (task.status !== 'completed' || !r || 'error' in r) {
      ctx.skip('tasks without a completed response');
      continue;
    }
    const rows: string[] = [];
    let last = 0;
    const tracks = Array.isArray(r.annotations) ? (r.annotations as Json[]) : [];
    tracks.forEach((track, i) => {
      if (track.type !== 'box') {
        ctx.skip(`${String(track.type)} tracks (MOT holds boxes)`);
        return;
      }
      for (const f of Array.isArray(track.frames) ? (track.frames as Json[]) : []) {
        const frame = Number(f.frame) + 1;
        last = Math.max(last, frame);
        rows.push(
          [frame, i + 1, two(Number(f.left)), two(Number(f.top)), two(Number(f.width)), two(Number(f.height)), 1, -1, -1, -1].join(','),
        );
      }
    });
    rows.sort((a, b) => Number(a.split(',')[0]) - Number(b.split(',')[0]) || Number(a.split(',')[1]) - Number(b.split(',')[1]));
    const size = ctx.imageSize(task);
    const rate = Number(task.params.frame_rate ?? 1) || 1;
    yield { name: `${task.taskId}/gt/gt.txt`, content: rows.length ? `${rows.join('\n')}\n` : '' };
    yield {
      name: `${task.taskId}/seqinfo.ini`,
      content: `[Sequence]\nname=${task.taskId}\nimDir=img1\nframeRate=${rate}\nseqLength=${last}\n${size ? `imWidth=${size.width}\nimHeight=${size.height}\n` : ''}imExt=.jpg\n`,
    };
  }
}

export const motFormat: ExportFormatDefinition = {
  name: 'mot',
  types: new Set(['videoplaybackannotation']),
  suffix: 'mot.tar.gz',
  writer: { kind: 'folder', write: mot },
};
