// Pascal VOC: `Annotations/<image>.xml` (each box an `object` with `name` and a `bndbox` in whole
// pixels, 1-based as VOC counts them) and `ImageSets/Main/trainval.txt` (the image names), under
// `VOCdevkit/VOC2012/` as the VOC devkit (and torchvision's VOCDetection) lay them out.
import type { Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FolderEntry, FormatContext } from './format.ts';
import { imageShapes } from './shapes.ts';

const xml = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const root = 'VOCdevkit/VOC2012';

async function* voc(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<FolderEntry> {
  const names: string[] = [];
  for await (const task of tasks) {
    const size = ctx.imageSize(task);
    if (!size) {
      ctx.skip("images of unknown size (give metadata.width and metadata.height, or the export's image_width and image_height)");
      continue;
    }
    const objects: string[] = [];
    for (const s of imageShapes(task)) {
      if (s.kind !== 'box') {
        ctx.skip(`${s.kind} annotations (the VOC export writes boxes)`);
        continue;
      }
      const xmin = Math.min(size.width, Math.max(1, Math.round(s.x) + 1));
      const ymin = Math.min(size.height, Math.max(1, Math.round(s.y) + 1));
      const xmax = Math.min(size.width, Math.max(xmin, Math.round(s.x + s.width)));
      const ymax = Math.min(size.height, Math.max(ymin, Math.round(s.y + s.height)));
      objects.push(
        `  <object>\n    <name>${xml(s.label)}</name>\n    <pose>Unspecified</pose>\n    <truncated>0</truncated>\n    <difficult>0</difficult>\n    <bndbox>\n      <xmin>${xmin}</xmin>\n      <ymin>${ymin}</ymin>\n      <xmax>${xmax}</xmax>\n      <ymax>${ymax}</ymax>\n    </bndbox>\n  </object>\n`,
      );
    }
    names.push(task.taskId);
    const url = String(task.params.attachment ?? '');
    yield {
      name: `${root}/Annotations/${task.taskId}.xml`,
      content: `<annotation>\n  <folder>VOC2012</folder>\n  <filename>${task.taskId}.jpg</filename>\n  <path>${xml(url)}</path>\n  <source>\n    <database>humantask</database>\n  </source>\n  <size>\n    <width>${size.width}</width>\n    <height>${size.height}</height>\n    <depth>3</depth>\n  </size>\n  <segmented>0</segmented>\n${objects.join('')}</annotation>\n`,
    };
  }
  yield { name: `${root}/ImageSets/Main/trainval.txt`, content: names.length ? `${names.join('\n')}\n` : '' };
}

export const vocFormat: ExportFormatDefinition = {
  name: 'voc',
  types: new Set(['annotation', 'imageannotation']),
  suffix: 'voc.tar.gz',
  writer: { kind: 'folder', write: voc },
};
