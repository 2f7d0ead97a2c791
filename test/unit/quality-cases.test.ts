// The scorers (server/domain/quality/score.ts) on hand-made answers whose scores are known, one or
// more per type, and the readable details they give (docs/quality.md's worked examples are here).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ClassResult,
  type FieldResult,
  isScoredType,
  type Match,
  type MatchGroup,
  type ScoreDetails,
  scoreAnswers,
} from '../../server/domain/quality/score.ts';
import { paramsArbitraries } from '../support/task-params.ts';

type Json = Record<string, unknown>;
const box = (left: number, top: number, width: number, height: number, label = 'car') => ({ left, top, width, height, label });
const boxes = (...annotations: Json[]) => ({ annotations });

// What the details hold, read the way a person (or the review screen) reads them.
const groupsOf = (details: ScoreDetails): MatchGroup[] => (details.kind === 'matching' ? details.groups : []);
const pairsOf = (details: ScoreDetails): Array<[number, number]> =>
  groupsOf(details).flatMap((g) => g.matches.map((m: Match): [number, number] => [m.a, m.b]));
const fieldsOf = (details: ScoreDetails): FieldResult[] => (details.kind === 'fields' ? details.fields : []);
const classesOf = (details: ScoreDetails): ClassResult[] => (details.kind === 'classes' ? details.classes : []);

it('has a scorer for every task type of the contract, and refuses a type it does not know', () => {
  for (const type of Object.keys(paramsArbitraries)) expect(isScoredType(type), type).toBe(true);
  expect(isScoredType('telepathy')).toBe(false);
  expect(() => scoreAnswers('telepathy', {}, {}, {})).toThrow(/no scorer for task type "telepathy"/);
});

describe('geometry', () => {
  it("docs/quality.md's worked example: two cars and a person, one car drawn half a box too low", () => {
    const expected = boxes(box(0, 0, 100, 100), box(200, 0, 100, 100), box(400, 0, 50, 100, 'person'));
    const worker = boxes(box(10, 0, 100, 100), box(200, 50, 100, 100), box(400, 0, 50, 100, 'person'));
    const result = scoreAnswers('annotation', {}, expected, worker);
    expect(result.score).toBeCloseTo((2 / 3) * ((9 / 11 + 1) / 2), 12);
    expect(result.details.summary).toBe(
      '2 of 3 boxes in a and 3 in b matched at ≥ 0.5 (F1 0.667), mean matched similarity 0.909: score 0.606',
    );
    expect(groupsOf(result.details)).toEqual([
      { key: '["box","car"]', matches: [{ a: 0, b: 0, similarity: 9 / 11 }], onlyInA: [1], onlyInB: [1] },
      { key: '["box","person"]', matches: [{ a: 2, b: 2, similarity: 1 }], onlyInA: [], onlyInB: [] },
    ]);
  });

  it('two boxes with IoU exactly 0.5 match (threshold 0.5): score 0.5; IoU 1/3 does not: score 0', () => {
    const expected = boxes(box(0, 0, 100, 100));
    const half = scoreAnswers('annotation', {}, expected, boxes(box(0, 0, 100, 50)));
    expect(half.score).toBe(0.5);
    expect(half.details).toMatchObject({ kind: 'matching', f1: 1, meanSimilarity: 0.5 });
    expect(half.details.summary).toBe('1 of 1 boxes in a and 1 in b matched at ≥ 0.5 (F1 1), mean matched similarity 0.5: score 0.5');
    expect(scoreAnswers('annotation', {}, expected, boxes(box(50, 0, 100, 100))).score).toBe(0);
  });

  it('matches one to one per label: a missed box and a box of another label lower F1', () => {
    const a = boxes(box(0, 0, 100, 100), box(200, 0, 100, 100), box(400, 0, 50, 50, 'person'));
    const b = boxes(box(0, 0, 100, 100), box(400, 0, 50, 50, 'car'));
    // One match (IoU 1) of 3 + 2 boxes: F1 = 2/5, mean IoU 1.
    const result = scoreAnswers('annotation', {}, a, b);
    expect(result.score).toBeCloseTo(0.4, 12);
    const car = groupsOf(result.details).find((g) => g.key === JSON.stringify(['box', 'car']));
    expect(car).toMatchObject({ matches: [{ a: 0, b: 0, similarity: 1 }], onlyInB: [1] });
    expect(car?.onlyInA).toEqual([1]);
  });

  it('annotation attributes do not change the score; a matched pair shows the share that agree', () => {
    const a = boxes({ ...box(0, 0, 100, 100), attributes: { color: 'red', doors: 4 } });
    const b = boxes({ ...box(0, 0, 100, 100), attributes: { color: 'red', doors: 2 } });
    const result = scoreAnswers('annotation', {}, a, b);
    expect(result.score).toBe(1);
    expect(groupsOf(result.details)[0]?.matches).toEqual([{ a: 0, b: 0, similarity: 1, value: 0.5 }]);
  });

  it('Hungarian matching takes the pairing with the best total IoU, not the greedy one', () => {
    // Greedy would pair a0 with b0 (IoU 0.90, the best single pair), leaving a1–b1 (0.67); the optimum a0–b1 (0.82) and a1–b0 (0.90).
    const a = boxes(box(0, 0, 100, 100), box(10, 0, 100, 100));
    const b = boxes(box(5, 0, 100, 100), box(-10, 0, 100, 100));
    const result = scoreAnswers('annotation', {}, a, b);
    expect(pairsOf(result.details)).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });

  it('polygons: a square against its left half has IoU 0.5', () => {
    const square = {
      label: 'roof',
      vertices: [0, 0, 100, 0, 100, 100, 0, 100].flatMap((_, i, v) => (i % 2 ? [] : [{ x: v[i], y: v[i + 1] }])),
    };
    const half = {
      label: 'roof',
      vertices: [0, 0, 50, 0, 50, 100, 0, 100].flatMap((_, i, v) => (i % 2 ? [] : [{ x: v[i], y: v[i + 1] }])),
    };
    expect(scoreAnswers('polygonannotation', {}, { annotations: [square] }, { annotations: [half] }).score).toBeCloseTo(0.5, 12);
    // A bow tie (self-crossing) is read as its two triangles: area 5000, all inside the square.
    const bowTie = {
      label: 'roof',
      vertices: [
        { x: 0, y: 0 },
        { x: 100, y: 100 },
        { x: 100, y: 0 },
        { x: 0, y: 100 },
      ],
    };
    expect(scoreAnswers('polygonannotation', {}, { annotations: [square] }, { annotations: [bowTie] }).score).toBeCloseTo(0.5, 6);
  });

  it('points: 1 − distance / 32 px; lines: 1 − mean distance / 32 px', () => {
    const point = (x: number, y: number) => ({ annotations: [{ label: 'eye', x, y }] });
    expect(scoreAnswers('pointannotation', {}, point(100, 100), point(100, 116)).score).toBe(0.5);
    expect(scoreAnswers('pointannotation', {}, point(100, 100), point(100, 117)).score).toBe(0);
    expect(scoreAnswers('pointannotation', {}, point(100, 100), point(100, 108), { distanceTolerance: 16 }).score).toBe(0.5);
    const line = (y: number) => ({
      annotations: [
        {
          label: 'lane',
          vertices: [
            { x: 0, y },
            { x: 200, y },
          ],
        },
      ],
    });
    expect(scoreAnswers('lineannotation', {}, line(0), line(8)).score).toBeCloseTo(0.75, 12);
  });

  it('imageannotation: shapes match within their geometry; ellipses and cuboids by the IoU of their outlines', () => {
    const circle = { type: 'ellipse', label: 'ball', x: 100, y: 100, rx: 50, ry: 50, rotation: 0 };
    const turned = { ...circle, rx: 50, ry: 50, rotation: 90 };
    const asBox = { type: 'box', label: 'ball', left: 50, top: 50, width: 100, height: 100 };
    expect(scoreAnswers('imageannotation', {}, { annotations: [circle] }, { annotations: [turned] }).score).toBeCloseTo(1, 9);
    expect(scoreAnswers('imageannotation', {}, { annotations: [circle] }, { annotations: [asBox] }).score).toBe(0);
    const corners = (dx: number) =>
      [
        ['face-topleft', 0, 0],
        ['face-topright', 100, 0],
        ['face-bottomleft', 0, 100],
        ['face-bottomright', 100, 100],
      ].map(([description, x, y]) => ({ description, x: (x as number) + dx, y }));
    const cuboid = (dx: number) => ({ annotations: [{ type: 'cuboid', label: 'box', vertices: corners(dx) }] });
    expect(scoreAnswers('imageannotation', {}, cuboid(0), cuboid(0)).score).toBe(1);
    expect(scoreAnswers('imageannotation', {}, cuboid(0), cuboid(50)).score).toBe(0); // IoU 1/3
  });

  it('a box, an ellipse or a point moved further away never scores higher', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 300 }),
        fc.integer({ min: 16, max: 300 }),
        fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 40, noNaN: true }), { minLength: 2, maxLength: 6 }),
        (w, h, angle, steps) => {
          const shifts: number[] = [];
          for (const s of steps) shifts.push((shifts.at(-1) ?? 0) + s);
          const at = (t: number) => [Math.cos(angle) * t, Math.sin(angle) * t] as const;
          for (const make of [
            (t: number) => ({ annotations: [{ type: 'box', label: 'x', left: 400 + at(t)[0], top: 400 + at(t)[1], width: w, height: h }] }),
            (t: number) => ({
              annotations: [{ type: 'ellipse', label: 'x', x: 400 + at(t)[0], y: 400 + at(t)[1], rx: w / 2, ry: h / 2, rotation: 30 }],
            }),
            (t: number) => ({ annotations: [{ type: 'point', label: 'x', x: 400 + at(t)[0], y: 400 + at(t)[1] }] }),
          ]) {
            const scores = shifts.map((t) => scoreAnswers('imageannotation', {}, make(0), make(t)).score);
            for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual((scores[i - 1] as number) + 1e-9);
          }
        },
      ),
      { numRuns: 40, seed: 7 },
    );
  });
});

describe('video, segmentation, lidar', () => {
  it('a track is compared frame by frame, keyframes interpolated; frames only one track has count 0', () => {
    const track = (frames: Json[]) => ({ uuid: 'u', type: 'box', label: 'car', frames });
    const a = {
      annotations: [
        track([
          { frame: 0, ...box(0, 0, 100, 100) },
          { frame: 2, ...box(100, 0, 100, 100) },
        ]),
      ],
      events: [],
    };
    // Frame 1 of a is interpolated to left 50; b has frames 0..1 only, and the same boxes there.
    const b = {
      annotations: [
        track([
          { frame: 0, ...box(0, 0, 100, 100) },
          { frame: 1, ...box(50, 0, 100, 100) },
        ]),
      ],
      events: [],
    };
    // Frames 0, 1 agree (IoU 1), frame 2 only in a: track similarity 2/3; one track each, F1 1.
    expect(scoreAnswers('videoplaybackannotation', {}, a, b).score).toBeCloseTo(2 / 3, 12);
    const events = (start: number, end: number) => ({ annotations: [], events: [{ label: 'brake', start, end }] });
    // Frames 0..3 against 2..5: 2 shared of 6, under the threshold.
    expect(scoreAnswers('videoplaybackannotation', {}, events(0, 3), events(0, 1)).score).toBe(0.5);
    expect(scoreAnswers('videoplaybackannotation', {}, events(0, 3), events(2, 5)).score).toBe(0);
  });

  it('segmentation: per-label IoU of the decoded masks, mean over labels present', () => {
    const mask = (...on: number[]) => ({ width: 2, height: 2, data: [0, 1, 2, 3].map((i) => (on.includes(i) ? 1 : 0)) });
    const masks = new Map([
      ['a/sky', mask(0, 1)],
      ['a/road', mask(2, 3)],
      ['b/sky', mask(0)],
      ['b/road', mask(1, 2, 3)],
    ]);
    const answer = (who: string) => ({ annotations: { labeled: { sky: `${who}/sky`, road: `${who}/road` } } });
    const result = scoreAnswers('segmentannotation', {}, answer('a'), answer('b'), { masks });
    // sky: 1 of 2 pixels; road: 2 of 3: mean (1/2 + 2/3) / 2.
    expect(result.score).toBeCloseTo(7 / 12, 12);
    expect(result.details).toMatchObject({ kind: 'classes', unscored: [] });
    expect(classesOf(result.details)).toEqual([
      { label: 'road', iou: 2 / 3, intersection: 2, union: 3 },
      { label: 'sky', iou: 0.5, intersection: 1, union: 2 },
    ]);
    const unscored = scoreAnswers('segmentannotation', {}, answer('a'), answer('c'), { masks });
    expect(unscored.details).toMatchObject({ unscored: ['road', 'sky'] });
  });

  it('lidar: per-class IoU over the points of every frame', () => {
    const cloud = (...points: number[]) => ({ labels: ['car', 'tree'], frames: [{ frame: 0, point_labels: points }] });
    // car: points 0, 1 in a, 0 in b (1/2); tree: 2, 3 in a, 1, 2, 3 in b (2/3); -1 is no class.
    expect(scoreAnswers('lidarsegmentation', {}, cloud(0, 0, 1, 1, -1), cloud(0, 1, 1, 1, -1)).score).toBeCloseTo(7 / 12, 12);
  });
});

describe('text and choices', () => {
  it('transcription: 1 − CER per field (kitten → sitting: 3 edits over 7 characters)', () => {
    const result = scoreAnswers(
      'transcription',
      {},
      { fields: { name: 'kitten', city: 'Paris' } },
      { fields: { name: 'sitting', city: 'Paris' } },
    );
    expect(result.score).toBeCloseTo((4 / 7 + 1) / 2, 12);
    expect(result.details).toMatchObject({
      kind: 'fields',
      fields: [
        { path: 'fields.city', score: 1 },
        { path: 'fields.name', measure: 'text' },
      ],
    });
  });

  it('transcription: repeatable rows are matched one to one whatever their order; a choice key is exact', () => {
    const params = { repeatable_fields: { item: 'The item', unit: { description: 'Unit', choices: ['kg', 'lb'] } } };
    const a = {
      repeatable_fields: [
        { item: 'apples', unit: 'kg' },
        { item: 'pears', unit: 'lb' },
      ],
    };
    const b = {
      repeatable_fields: [
        { item: 'pears', unit: 'kg' },
        { item: 'apples', unit: 'kg' },
      ],
    };
    // apples–apples 1, pears–pears (1 + 0) / 2: Σ 1.5 over 2 rows.
    expect(scoreAnswers('transcription', params, a, b).score).toBeCloseTo(0.75, 12);
  });

  it('audio: the transcript; document: regions matched by place, then their text', () => {
    expect(scoreAnswers('audiotranscription', {}, { transcript: 'hello world' }, { transcript: 'hello word' }).score).toBeCloseTo(
      1 - 1 / 11,
      12,
    );
    const region = (text: string, left: number) => ({ type: 'line', page: 1, left, top: 0, width: 100, height: 10, text });
    const a = { annotations: [region('Total 42', 0), region('Paid', 200)] };
    const b = { annotations: [region('Total 4', 10)] };
    // One pair (IoU 0.82): text 7/8; the unmatched region counts 0: Σ 7/8 over 2 regions.
    expect(scoreAnswers('documenttranscription', {}, a, b).score).toBeCloseTo(7 / 16, 12);
  });

  it('categorization: exact for one category, Jaccard for several', () => {
    expect(scoreAnswers('categorization', {}, { category: 'cat' }, { category: 'cat' }).score).toBe(1);
    expect(scoreAnswers('categorization', {}, { category: 'cat' }, { category: 'dog' }).score).toBe(0);
    expect(scoreAnswers('categorization', {}, { category: ['a', 'b'] }, { category: ['b', 'c'] }).score).toBeCloseTo(1 / 3, 12);
  });

  it('comparison and datacollection: the choice exactly, free text by normalized edit distance (case and spacing ignored)', () => {
    const a = { choice: 'left', fields: { why: 'Sharper  Image' } };
    expect(scoreAnswers('comparison', {}, a, { choice: 'left', fields: { why: 'sharper image' } }).score).toBe(1);
    expect(scoreAnswers('comparison', {}, a, { choice: 'right', fields: { why: 'sharper image' } }).score).toBe(0.5);
    expect(scoreAnswers('datacollection', {}, { fields: { phone: '555-0100' } }, { fields: { phone: '555-0199' } }).score).toBe(0.75);
    expect(scoreAnswers('datacollection', {}, { fields: { phone: '1' } }, { fields: {} }).score).toBe(0);
  });

  it('textcollection: each field by its type; several answers as a set; hidden fields do not count', () => {
    const params = {
      fields: [
        { type: 'boolean', field_id: 'open' },
        { type: 'number', field_id: 'seats' },
        { type: 'category', field_id: 'cuisine', max_choices: 3 },
        { type: 'datetime', field_id: 'since', include: ['year', 'month'] },
        { type: 'time_range', field_id: 'hours' },
        { type: 'text', field_id: 'dishes', max_responses_required: 3 },
        { type: 'text', field_id: 'hidden' },
      ],
    };
    const a = {
      annotations: {
        open: true,
        seats: '40',
        cuisine: ['thai', 'lao'],
        since: { year: 2001, month: 5 },
        hours: { from_seconds: 36000, to_seconds: 72000 },
        dishes: ['larb', 'pad thai'],
      },
    };
    const b = {
      annotations: {
        open: true,
        seats: '40.0',
        cuisine: ['thai'],
        since: { year: 2001, month: 6 },
        hours: { from_seconds: 39600, to_seconds: 72000 },
        dishes: ['pad thai', 'larb', 'soup'],
      },
    };
    const result = scoreAnswers('textcollection', params, a, b);
    // open 1, seats 1, cuisine 1/2, since 1/2, hours 32400/36000 = 0.9, dishes (1 + 1) / 3.
    expect(result.score).toBeCloseTo((1 + 1 + 0.5 + 0.5 + 0.9 + 2 / 3) / 6, 12);
    expect(fieldsOf(result.details).map((f) => [f.path, f.measure])).toEqual([
      ['open', 'exact'],
      ['seats', 'exact'],
      ['cuisine', 'jaccard'],
      ['since', 'parts'],
      ['hours', 'range'],
      ['dishes', 'set'],
    ]);
  });
});

describe('namedentityrecognition', () => {
  const text = 'Ada Lovelace met Charles Babbage in London';
  const span = (id: string, start: number, end: number, label: string) => ({ id, start, end, label, text: text.slice(start, end) });

  it('spans of the same label overlapping by at least half (Jaccard over code points) match; relationships follow their spans', () => {
    const params = { text, relationships: [{ name: 'met', is_directed: false }] };
    const a = {
      annotations: [span('a1', 0, 12, 'PERSON'), span('a2', 17, 32, 'PERSON'), span('a3', 36, 42, 'CITY')],
      relationships: [{ id: 'r1', name: 'met', source_ref: 'a1', target_ref: 'a2' }],
    };
    const b = {
      // "Ada" alone overlaps "Ada Lovelace" by 3/12: no match. "Charles Babbage" exact; "London" as ORG: another label.
      annotations: [span('b1', 0, 3, 'PERSON'), span('b2', 17, 32, 'PERSON'), span('b3', 36, 42, 'ORG')],
      relationships: [{ id: 'q1', name: 'met', source_ref: 'b2', target_ref: 'b1' }],
    };
    // 1 span matched of 3 + 3, the relationship not (its source span is unmatched): F1 = 2 × 1 / (3 + 3 + 1 + 1).
    expect(scoreAnswers('namedentityrecognition', params, a, b).score).toBe(0.25);
    const closer = { ...b, annotations: [span('b1', 0, 7, 'PERSON'), ...b.annotations.slice(1)] };
    // "Ada Lov" overlaps 7/12 ≥ 0.5: two spans and the (undirected) relationship match: 2 × 3 / 8.
    expect(scoreAnswers('namedentityrecognition', params, a, closer).score).toBe(0.75);
    // Exact matching only: threshold 1.
    expect(scoreAnswers('namedentityrecognition', params, a, closer, { matchThreshold: 1 }).score).toBe(0.25);
  });
});
