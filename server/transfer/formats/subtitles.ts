// Audio transcriptions as subtitles: a WebVTT or SubRip file per task (`<task_id>.vtt`, `.srt`),
// a cue per segment of the response, in its order, its text the segment's.
import type { Json, Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FolderEntry, FormatContext } from './format.ts';

/** `hh:mm:ss.ttt` (WebVTT) or `hh:mm:ss,ttt` (SRT). */
function time(seconds: number, separator: '.' | ','): string {
  const ms = Math.round(Math.max(0, seconds) * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/** Cue text cannot hold a blank line (it would end the cue) or, in WebVTT, the arrow. */
const cueText = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .join('\n')
    .replaceAll('-->', '->') || '…';

function segmentsOf(task: Task, ctx: FormatContext): { start: number; end: number; text: string }[] | null {
  const r = task.response as Json | null;
  if (task.status !== 'completed' || !r || 'error' in r) {
    ctx.skip('tasks without a completed response');
    return null;
  }
  return (Array.isArray(r.segments) ? (r.segments as Json[]) : []).map((s) => ({
    start: Number(s.start_seconds),
    end: Number(s.end_seconds),
    text: String(s.text ?? ''),
  }));
}

function subtitles(kind: 'webvtt' | 'srt') {
  return async function* (tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<FolderEntry> {
    for await (const task of tasks) {
      const segments = segmentsOf(task, ctx);
      if (!segments) continue;
      const cues = segments.map((s, i) =>
        kind === 'webvtt'
          ? `${i + 1}\n${time(s.start, '.')} --> ${time(s.end, '.')}\n${cueText(s.text).replaceAll('&', '&amp;').replaceAll('<', '&lt;')}\n`
          : `${i + 1}\n${time(s.start, ',')} --> ${time(s.end, ',')}\n${cueText(s.text)}\n`,
      );
      const content = kind === 'webvtt' ? `WEBVTT\n\n${cues.join('\n')}` : cues.join('\n');
      yield { name: `${task.taskId}.${kind === 'webvtt' ? 'vtt' : 'srt'}`, content };
    }
  };
}

const audio = new Set(['audiotranscription']);
export const webvttFormat: ExportFormatDefinition = {
  name: 'webvtt',
  types: audio,
  suffix: 'webvtt.tar.gz',
  writer: { kind: 'folder', write: subtitles('webvtt') },
};
export const srtFormat: ExportFormatDefinition = {
  name: 'srt',
  types: audio,
  suffix: 'srt.tar.gz',
  writer: { kind: 'folder', write: subtitles('srt') },
};
