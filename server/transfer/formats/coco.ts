// COCO (the detection format of cocodataset.org, as pycocotools reads it): one JSON file of
// `images`, `annotations` and `categories`. Written in one pass over the tasks: each image is
// written as its task comes, its annotations go to a scratch file appended after the images, and
// the categories (known only at the end) come last. Memory: a task at a time and the label names.
import type { Json, Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FormatContext } from './format.ts';
import { boundingBox, Categories, decodeMask, imageShapes, paramLabels, polygonArea, rle } from './shapes.ts';

const round = (n: number) => Math.round(n * 100) / 100;

async function* coco(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<string> {
  const categories = new Categories(ctx.ontologyLabels, 1);
  const keypointLabels = new Set<string>();
  const scratch = ctx.scratch();
  let imageId = 0;
  let annotationId = 0;
  yield `{"info":${JSON.stringify({ description: 'humantask export', version: '1.0', date_created: new Date().toISOString() })},"licenses":[],"images":[`;
  for await (const task of tasks) {
    for (const label of paramLabels(task)) categories.idOf(label);
    const shapes = imageShapes(task);
    // A mask gives the image's size when nothing else does.
    let size = ctx.imageSize(task);
    const masks = new Map<string, ReturnType<typeof decodeMask>>();
    for (const s of shapes) if (s.kind === 'mask') masks.set(s.url, decodeMask(s.url));
    const maskSize = [...masks.values()].find((m) => m !== null);
    if (maskSize) size = { width: maskSize.width, height: maskSize.height };
    if (!size) {
      ctx.skip("images of unknown size (give metadata.width and metadata.height, or the export's image_width and image_height)");
      continue;
    }
    imageId++;
    const image = {
      id: imageId,
      file_name: String(task.params.attachment ?? task.taskId),
      width: size.width,
      height: size.height,
      humantask_task_id: task.taskId,
    };
    yield `${imageId > 1 ? ',' : ''}${JSON.stringify(image)}`;
    for (const s of shapes) {
      let annotation: Json | null = null;
      const base = { image_id: imageId, category_id: categories.idOf(s.label), iscrowd: 0 };
      if (s.kind === 'box') {
        const [x, y, w, h] = [s.x, s.y, s.width, s.height].map(round) as [number, number, number, number];
        annotation = { ...base, bbox: [x, y, w, h], area: round(w * h), segmentation: [[x, y, x + w, y, x + w, y + h, x, y + h]] };
      } else if (s.kind === 'polygon') {
        if (s.points.length < 3) {
          ctx.skip('polygons of fewer than 3 vertices');
          continue;
        }
        annotation = {
          ...base,
          bbox: boundingBox(s.points).map(round),
          area: round(polygonArea(s.points)),
          segmentation: [s.points.flat().map(round)],
        };
      } else if (s.kind === 'point') {
        keypointLabels.add(s.label);
        annotation = {
          ...base,
          bbox: [round(s.x), round(s.y), 0, 0],
          area: 0,
          segmentation: [],
          keypoints: [round(s.x), round(s.y), 2],
          num_keypoints: 1,
        };
      } else if (s.kind === 'mask') {
        const mask = masks.get(s.url);
        if (!mask) {
          ctx.skip('segmentation masks not given inline (a mask URL this server does not fetch)');
          continue;
        }
        const r = rle(mask);
        annotation = { ...base, bbox: r.bbox, area: r.area, segmentation: { size: r.size, counts: r.counts } };
      } else {
        ctx.skip(`${s.kind} annotations (COCO has no ${s.kind} shape)`);
        continue;
      }
      annotationId++;
      await scratch.write(`${annotationId > 1 ? ',' : ''}${JSON.stringify({ id: annotationId, ...annotation })}`);
    }
  }
  yield '],"annotations":[';
  yield* scratch.drain();
  const list = [...categories.ids].map(([name, id]) => ({
    id,
    name,
    supercategory: '',
    ...(keypointLabels.has(name) ? { keypoints: [name], skeleton: [] } : {}),
  }));
  yield `],"categories":${JSON.stringify(list)}}\n`;
}

export const cocoFormat: ExportFormatDefinition = {
  name: 'coco',
  types: new Set(['annotation', 'polygonannotation', 'pointannotation', 'segmentannotation', 'imageannotation']),
  suffix: 'coco.json.gz',
  writer: { kind: 'file', write: coco },
};
