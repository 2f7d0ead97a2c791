// Issue 36: every export format read back by a well-known reader of that format, and what it reads
// compared with the tasks' responses (read through the task API): a box exported is the box labeled.
// COCO by pycocotools (masks drawn from polygons and RLE), YOLO as Ultralytics' loader reads it
// (PyYAML, numpy), Pascal VOC as torchvision's VOCDetection parses it, CoNLL-2003 by spaCy's CoNLL
// converter and spaCy's offsets by Doc.char_span, WebVTT by webvtt-parser (W3C's), SRT by
// srt-parser-2, MOT by numpy as its devkits read it. The Python readers are in test/support/readers/
// (.ci/run installs pycocotools, PyYAML, numpy and spaCy from the machine's package mirror).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { PNG } from 'pngjs';
import srtParser2 from 'srt-parser-2';
import { extract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../support/net.ts';
// @ts-expect-error webvtt-parser ships no types
import { WebVTTParser } from 'webvtt-parser';
import { takeAndSubmit } from '../support/assignments.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { exportAll, gunzipText, importAll } from '../support/transfer.ts';
import { createWorker, workerClient } from '../support/workers.ts';

const run = promisify(execFile);
const readers = path.join(import.meta.dirname, '..', 'support', 'readers');
const cb = 'https://example.com/humantask/callback';
const image = (i: number) => `https://example.com/images/${i}.jpg`;

/** Runs a Python reader on `args`: what it printed, as JSON. */
async function read(reader: string, ...args: string[]): Promise<any> {
  const { stdout } = await run('python3', [path.join(readers, reader), ...args], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout);
}

/** The files of a gzip'd tar, written into a new folder: its path. */
async function untar(gzip: Buffer, dirs: string[]): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-export-'));
  dirs.push(dir);
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        const file = path.join(dir, header.name);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, Buffer.concat(chunks));
        next();
      });
      stream.resume();
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  ex.end(gunzipSync(gzip));
  await done;
  return dir;
}

/** A PNG mask (white where `on`), as the labeling app answers it: a data URL. */
function maskUrl(width: number, height: number, on: (x: number, y: number) => boolean): string {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = 4 * (y * width + x);
      const v = on(x, y) ? 255 : 0;
      png.data[i] = png.data[i + 1] = png.data[i + 2] = v;
      png.data[i + 3] = 255;
    }
  return `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
}

const lines = [
  ...[0, 1, 2].map((i) => ({ type: 'annotation', callback_url: cb, attachment: image(i), objects_to_annotate: ['car', 'truck'] })),
  ...[3, 4].map((i) => ({ type: 'polygonannotation', callback_url: cb, attachment: image(i), objects_to_annotate: ['lake'] })),
  ...[5, 6].map((i) => ({ type: 'pointannotation', callback_url: cb, attachment: image(i), objects_to_annotate: ['eye'] })),
  ...[7, 8].map((i) => ({
    type: 'imageannotation',
    callback_url: cb,
    attachment: image(i),
    geometries: {
      box: { objects_to_annotate: ['sign'] },
      polygon: { objects_to_annotate: ['field'] },
      ellipse: { objects_to_annotate: ['ball'] },
      point: { objects_to_annotate: ['pin'] },
      line: { objects_to_annotate: ['lane'] },
    },
  })),
  ...['Ada Lovelace met Charles Babbage in London in 1833', 'Grace Hopper worked at Harvard with Howard Aiken'].map((text) => ({
    type: 'namedentityrecognition',
    callback_url: cb,
    text,
    labels: [{ name: 'PER' }, { name: 'LOC' }, { name: 'ORG' }],
  })),
  ...[0, 1].map((i) => ({
    type: 'audiotranscription',
    callback_url: cb,
    attachment: `https://example.com/audio/${i}.mp3`,
    attachment_type: 'audio',
  })),
  ...[0, 1].map((i) => ({
    type: 'videoplaybackannotation',
    callback_url: cb,
    attachment: `https://example.com/video/${i}.mp4`,
    attachment_type: 'video',
    frame_rate: 2,
    geometries: { box: { objects_to_annotate: ['car'] }, point: { objects_to_annotate: ['light'] } },
  })),
];

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('export formats read back on %s', (db) => {
  let server: TestServer;
  let key: string;
  let call: ReturnType<typeof client>;
  const dirs: string[] = [];
  /** The tasks of a type, by id, as the API shows them. */
  const tasksOf = async (type: string) => {
    const docs: any[] = [];
    for (let token: string | undefined, first = true; first || token; first = false) {
      const page = await call('GET', `/v1/tasks?type=${type}&limit=100${token ? `&next_token=${token}` : ''}`);
      docs.push(...page.body.docs);
      token = page.body.next_token;
    }
    return new Map(docs.map((t) => [t.task_id, t]));
  };
  beforeAll(async () => {
    server = await startTestServer(db);
    key = server.dev.test_key;
    call = client(server, 'current', key);
    const done = await importAll(server, key, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    expect(done).toMatchObject({ created: lines.length, refused: 0 });
  });
  afterAll(async () => {
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('COCO: pycocotools reads every box, polygon, ellipse, point and mask as labeled', async () => {
    // A live segmentation task, answered by a worker with inline PNG masks (640 × 480).
    const live = client(server, 'current', server.dev.live_key);
    const made = await live('POST', '/v1/task/segmentannotation', {
      json: {
        callback_url: cb,
        attachment: image(99),
        labels: ['road', 'sky'],
        instance_labels: ['car'],
        metadata: { width: 640, height: 480 },
      },
    });
    expect(made.status, made.text).toBe(200);
    const road = maskUrl(640, 480, (_x, y) => y >= 300);
    const sky = maskUrl(640, 480, (_x, y) => y < 300);
    const car = maskUrl(640, 480, (x, y) => x >= 100 && x < 150 && y >= 320 && y < 360);
    const worker = workerClient(server, (await createWorker(server)).token);
    await takeAndSubmit(worker, made.body.task_id, {
      annotations: { unlabeled: null, labeled: { road, sky, car: [car] }, combined: { image: road, indexedImage: road } },
      labelMapping: { road: { color: '#808080', index: 1 }, sky: { color: '#87ceeb', index: 2 }, car: [{ color: '#ff0000', index: 3 }] },
      instances: { car: 1 },
    });
    const liveExport = await exportAll(server, server.dev.live_key, { format: 'coco' }, { type: 'segmentannotation' });
    const liveDir = mkdtempSync(path.join(tmpdir(), 'humantask-coco-'));
    dirs.push(liveDir);
    writeFileSync(path.join(liveDir, 'masks.json'), gunzipSync(liveExport.gzip));
    const masks = await read('coco.py', path.join(liveDir, 'masks.json'));
    expect(masks.images).toHaveLength(1);
    expect(masks.images[0]).toMatchObject({ task_id: made.body.task_id, width: 640, height: 480 });
    const byLabel = Object.fromEntries(masks.images[0].annotations.map((a: any) => [a.label, a]));
    expect(byLabel.road).toMatchObject({ rle: true, mask_pixels: 640 * 180, area: 640 * 180, bbox: [0, 300, 640, 180] });
    expect(byLabel.sky).toMatchObject({ rle: true, mask_pixels: 640 * 300 });
    expect(byLabel.car).toMatchObject({ rle: true, mask_pixels: 50 * 40, bbox: [100, 320, 50, 40] });

    const types = ['annotation', 'polygonannotation', 'pointannotation', 'imageannotation'];
    const exported: any[] = [];
    const tasks = new Map<string, any>();
    for (const type of types) {
      const { export: done, gzip } = await exportAll(server, key, { format: 'coco' }, { type });
      const file = path.join(liveDir, `${type}.json`);
      writeFileSync(file, gunzipSync(gzip));
      const coco = await read('coco.py', file);
      exported.push(...coco.images);
      for (const [id, t] of await tasksOf(type)) tasks.set(id, t);
      if (type === 'imageannotation') {
        const lineCount = [...tasks.values()]
          .filter((t) => t.type === type)
          .flatMap((t) => t.response.annotations.filter((a: any) => a.type === 'line')).length;
        expect(done.skipped).toEqual(lineCount ? [{ reason: 'line annotations (COCO has no line shape)', count: lineCount }] : []);
        expect(coco.keypoint_categories).toContain('pin');
      }
      expect(coco.categories).toEqual(expect.arrayContaining(type === 'annotation' ? ['car', 'truck'] : []));
    }
    expect(exported.map((i) => i.task_id).sort()).toEqual([...tasks.keys()].sort());
    for (const img of exported) {
      const task = tasks.get(img.task_id);
      expect([img.width, img.height]).toEqual([1024, 768]);
      const expected = (task.response.annotations as any[]).filter((a) => a.type !== 'line' && a.type !== 'cuboid');
      expect(img.annotations.map((a: any) => a.label)).toEqual(expected.map((a) => a.label));
      img.annotations.forEach((a: any, i: number) => {
        const shape = expected[i];
        const kind =
          task.type === 'annotation'
            ? 'box'
            : task.type === 'polygonannotation'
              ? 'polygon'
              : task.type === 'pointannotation'
                ? 'point'
                : shape.type;
        if (kind === 'box') {
          expect(a.bbox.map((v: number) => Math.round(v))).toEqual([shape.left, shape.top, shape.width, shape.height].map(Math.round));
          // pycocotools draws the box polygon: its pixels are the box's area.
          expect(Math.abs(a.mask_pixels - shape.width * shape.height)).toBeLessThanOrEqual(2 * (shape.width + shape.height) + 4);
        } else if (kind === 'point') {
          expect(a.keypoints.map((v: number) => Math.round(v))).toEqual([Math.round(shape.x), Math.round(shape.y), 2]);
        } else if (kind === 'polygon') {
          const xs = shape.vertices.map((v: any) => v.x);
          const ys = shape.vertices.map((v: any) => v.y);
          expect(a.bbox[0]).toBeCloseTo(Math.min(...xs), 1);
          expect(a.bbox[1]).toBeCloseTo(Math.min(...ys), 1);
          expect(a.mask_pixels).toBeGreaterThan(0);
        } else if (kind === 'ellipse') {
          // The 32-point polygon of an ellipse: its area is close to π·rx·ry.
          expect(a.area / (Math.PI * shape.rx * shape.ry)).toBeGreaterThan(0.97);
          expect(a.area / (Math.PI * shape.rx * shape.ry)).toBeLessThan(1.01);
        }
      });
    }
  });

  it('YOLO: boxes and polygons come back in pixels from the normalized rows, polygons not empty', async () => {
    const tasks = new Map([
      ...(await tasksOf('annotation')),
      ...(await tasksOf('polygonannotation')),
      ...(await tasksOf('imageannotation')),
    ]);
    const files: Record<string, any[]> = {};
    for (const type of ['annotation', 'polygonannotation', 'imageannotation']) {
      const { gzip } = await exportAll(server, key, { format: 'yolo' }, { type });
      const yolo = await read('yolo.py', await untar(gzip, dirs), '1024', '768');
      if (type === 'annotation') expect(yolo.names.slice(0, 2)).toEqual(['car', 'truck']);
      Object.assign(files, yolo.files);
    }
    expect(Object.keys(files).sort()).toEqual([...tasks.keys()].sort());
    for (const [id, shapes] of Object.entries<any[]>(files)) {
      const task = tasks.get(id);
      const kept = (task.response.annotations as any[]).filter((a) =>
        task.type === 'imageannotation' ? ['box', 'polygon', 'ellipse'].includes(a.type) : true,
      );
      expect(shapes.map((s) => s.label)).toEqual(kept.map((a) => a.label));
      shapes.forEach((s, i) => {
        const a = kept[i];
        const isBox = task.type === 'annotation' || a.type === 'box';
        if (isBox && s.box)
          s.box.forEach((v: number, j: number) => {
            expect(v).toBeCloseTo([a.left, a.top, a.width, a.height][j], 1);
          });
        else if (isBox) expect(s.points[0][0]).toBeCloseTo(a.left, 1);
        else if (task.type === 'polygonannotation' || a.type === 'polygon') {
          expect(s.points.length).toBe(a.vertices.length);
          s.points.forEach(([x, y]: number[], j: number) => {
            expect(x).toBeCloseTo(a.vertices[j].x, 1);
            expect(y).toBeCloseTo(a.vertices[j].y, 1);
          });
        } else expect(s.points.length).toBe(32);
      });
    }
  });

  it('Pascal VOC: every box in 1-based whole pixels', async () => {
    const tasks = await tasksOf('annotation');
    const { gzip } = await exportAll(server, key, { format: 'voc' }, { type: 'annotation' });
    const voc = await read('voc.py', await untar(gzip, dirs));
    expect(Object.keys(voc).sort()).toEqual([...tasks.keys()].sort());
    for (const [id, img] of Object.entries<any>(voc)) {
      const task = tasks.get(id);
      expect(img.size).toEqual([1024, 768]);
      expect(img.path).toBe(task.params.attachment);
      expect(img.boxes).toEqual(
        task.response.annotations.map((a: any) => ({
          label: a.label,
          box: [Math.round(a.left) + 1, Math.round(a.top) + 1, Math.round(a.left + a.width), Math.round(a.top + a.height)],
        })),
      );
    }
  });

  it("CoNLL-2003 and spaCy's offsets: spaCy reads the entities as labeled", async () => {
    const tasks = await tasksOf('namedentityrecognition');
    const conll = await exportAll(server, key, { format: 'conll2003' }, { type: 'namedentityrecognition' });
    const offsets = await exportAll(server, key, { format: 'spacy' }, { type: 'namedentityrecognition' });
    const dir = mkdtempSync(path.join(tmpdir(), 'humantask-ner-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'a.conll'), gunzipText(conll.gzip));
    writeFileSync(path.join(dir, 'b.jsonl'), gunzipText(offsets.gzip));
    const ner = await read('ner.py', path.join(dir, 'a.conll'), path.join(dir, 'b.jsonl'));
    const listed = [...tasks.values()];
    const expected = listed.map((t) =>
      [...(t.response.annotations as any[])].sort((a, b) => a.start - b.start).map((a) => [a.text, a.label]),
    );
    expect(ner.conll.map((d: any) => d.text)).toEqual(listed.map((t) => t.params.text));
    expect(ner.conll.map((d: any) => d.entities)).toEqual(expected);
    expect(ner.offsets.map((d: any) => d.task_id)).toEqual(listed.map((t) => t.task_id));
    expect(ner.offsets.map((d: any) => d.entities)).toEqual(expected);
    expect(expected.flat().length).toBeGreaterThan(0);
  });

  it('WebVTT and SRT: each segment a cue, read back by webvtt-parser and srt-parser-2', async () => {
    const tasks = await tasksOf('audiotranscription');
    const vtt = await untar((await exportAll(server, key, { format: 'webvtt' }, { type: 'audiotranscription' })).gzip, dirs);
    const srt = await untar((await exportAll(server, key, { format: 'srt' }, { type: 'audiotranscription' })).gzip, dirs);
    for (const [id, task] of tasks) {
      const segments = task.response.segments as any[];
      const parsed = new WebVTTParser().parse(readFileSync(path.join(vtt, `${id}.vtt`), 'utf8'), 'subtitles');
      expect(parsed.errors).toEqual([]);
      expect(parsed.cues.map((c: any) => [c.startTime, c.endTime, c.text])).toEqual(
        segments.map((s) => [Math.round(s.start_seconds * 1000) / 1000, Math.round(s.end_seconds * 1000) / 1000, s.text]),
      );
      const cues = new srtParser2().fromSrt(readFileSync(path.join(srt, `${id}.srt`), 'utf8'));
      expect(cues.map((c) => [c.startSeconds, c.endSeconds, c.text])).toEqual(
        segments.map((s) => [Math.round(s.start_seconds * 1000) / 1000, Math.round(s.end_seconds * 1000) / 1000, s.text]),
      );
    }
  });

  it('MOT: each box of each track in its frame, counted from 1', async () => {
    const tasks = await tasksOf('videoplaybackannotation');
    const { export: done, gzip } = await exportAll(server, key, { format: 'mot' }, { type: 'videoplaybackannotation' });
    const mot = await read('mot.py', await untar(gzip, dirs));
    expect(Object.keys(mot).sort()).toEqual([...tasks.keys()].sort());
    let points = 0;
    for (const [id, seq] of Object.entries<any>(mot)) {
      // A video response's tracks are a file the task links (decision record 24).
      const link = tasks.get(id).response.annotations;
      const tracks = (await (await fetch(link.url, { headers: { authorization: basicAuth(key) } })).json()) as any[];
      const expected = tracks
        .flatMap((t, i) => (t.type === 'box' ? t.frames.map((f: any) => [f.frame + 1, i + 1, f.left, f.top, f.width, f.height]) : []))
        .sort((a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]!);
      points += tracks.filter((t) => t.type !== 'box').length;
      expect(seq.rows.length).toBe(expected.length);
      seq.rows.forEach((row: number[], i: number) => {
        expect(row.slice(0, 2)).toEqual(expected[i].slice(0, 2));
        row.slice(2).forEach((v, j) => {
          expect(v).toBeCloseTo(expected[i][j + 2], 1);
        });
      });
    }
    expect(done.skipped).toEqual(points ? [{ reason: 'point tracks (MOT holds boxes)', count: points }] : []);
  });
});
