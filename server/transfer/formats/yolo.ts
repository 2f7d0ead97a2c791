// YOLO, as Ultralytics lays a dataset out: `labels/<image>.txt` (one row a shape: the class index,
// then coordinates normalized to 0..1), `data.yaml` (the class names by index) and `images.txt`
// (which image each label file is for: this server keeps no images). A file whose image has a
// polygon is written as segmentation rows (`class x1 y1 x2 y2 ...`, a box as its four corners), so
// that Ultralytics reads the whole file one way; otherwise as detection rows (`class cx cy w h`).
import { stringify } from 'yaml';
import type { Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FolderEntry, FormatContext } from './format.ts';
import { Categories, imageShapes, paramLabels, type Shape } from './shapes.ts';

const six = (n: number) => Number(Math.min(1, Math.max(0, n)).toFixed(6));

async function* yolo(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<FolderEntry> {
  const classes = new Categories(ctx.ontologyLabels, 0);
  const images: string[] = [];
  for await (const task of tasks) {
    for (const label of paramLabels(task)) classes.idOf(label);
    const size = ctx.imageSize(task);
    if (!size) {
      ctx.skip("images of unknown size (give metadata.width and metadata.height, or the export's image_width and image_height)");
      continue;
    }
    const kept: Exclude<Shape, { kind: 'point' | 'mask' | 'line' | 'cuboid' }>[] = [];
    for (const s of imageShapes(task)) {
      if (s.kind === 'box') kept.push(s);
      else if (s.kind === 'polygon' && s.points.length >= 3) kept.push(s);
      else ctx.skip(s.kind === 'polygon' ? 'polygons of fewer than 3 vertices' : `${s.kind} annotations (YOLO has no ${s.kind} shape)`);
    }
    const [w, h] = [size.width, size.height];
    const segments = kept.some((s) => s.kind === 'polygon');
    const rows = kept.map((s) => {
      const cls = classes.idOf(s.label);
      if (s.kind === 'box') {
        if (!segments)
          return [cls, six((s.x + s.width / 2) / w), six((s.y + s.height / 2) / h), six(s.width / w), six(s.height / h)].join(' ');
        const corners: [number, number][] = [
          [s.x, s.y],
          [s.x + s.width, s.y],
          [s.x + s.width, s.y + s.height],
          [s.x, s.y + s.height],
        ];
        return [cls, ...corners.flatMap(([x, y]) => [six(x / w), six(y / h)])].join(' ');
      }
      return [cls, ...s.points.flatMap(([x, y]) => [six(x / w), six(y / h)])].join(' ');
    });
    images.push(`${task.taskId}\t${String(task.params.attachment ?? '')}`);
    yield { name: `labels/${task.taskId}.txt`, content: rows.length ? `${rows.join('\n')}\n` : '' };
  }
  yield { name: 'images.txt', content: images.length ? `${images.join('\n')}\n` : '' };
  // Class indexes as YAML integers (Ultralytics reads `names` by index).
  const names = new Map([...classes.ids].map(([name, id]) => [id, name]));
  yield {
    name: 'data.yaml',
    content: `# humantask export: put each image of images.txt at images/<its first column>.<extension> beside labels/\n${stringify({ path: '.', train: 'images', val: 'images', nc: classes.ids.size, names })}`,
  };
}

export const yoloFormat: ExportFormatDefinition = {
  name: 'yolo',
  types: new Set(['annotation', 'polygonannotation', 'imageannotation']),
  suffix: 'yolo.tar.gz',
  writer: { kind: 'folder', write: yolo },
};
