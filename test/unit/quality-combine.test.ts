// Combining overlapping answers (server/domain/quality/combine.ts), property-based for every task
// type over the synthetic answers' params (test/support/task-params.ts), plus hand-made cases:
// N copies of one answer combine to that answer with agreement 1; several workers' answers combine
// to an answer that passes the type's response schema and the task's answer rules; majorities,
// weights, averaging and clustering do what docs/quality.md says.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAnswer } from '../../shared/answer-rules.ts';
import { agreementOf, combineAnswers } from '../../server/domain/quality/combine.ts';
import { accuracyWeight } from '../../server/domain/quality/consensus.ts';
import { syntheticResponse, type TaskType } from '../../server/domain/synthetic.ts';
import { makeValidator } from '../support/spec.ts';
import { paramsArbitraries, taskIds } from '../support/task-params.ts';

type Json = Record<string, unknown>;
const SEED = 20261125;
const RUNS = { numRuns: 60, seed: SEED };

const prefixes: Record<TaskType, string> = {
  annotation: 'Annotation',
  pointannotation: 'PointAnnotation',
  lineannotation: 'LineAnnotation',
  polygonannotation: 'PolygonAnnotation',
  segmentannotation: 'SegmentAnnotation',
  categorization: 'Categorization',
  comparison: 'Comparison',
  datacollection: 'DataCollection',
  transcription: 'Transcription',
  audiotranscription: 'AudioTranscription',
  imageannotation: 'ImageAnnotation',
  textcollection: 'TextCollection',
  namedentityrecognition: 'NamedEntityRecognition',
  documenttranscription: 'DocumentTranscription',
  videoplaybackannotation: 'VideoPlaybackAnnotation',
  lidarsegmentation: 'LidarSegmentation',
};
const types = Object.keys(prefixes) as TaskType[];
/** The types whose combined answer is the medoid answer (docs/quality.md says why). */
const medoidTypes: TaskType[] = [
  'segmentannotation',
  'transcription',
  'audiotranscription',
  'documenttranscription',
  'videoplaybackannotation',
];
const validator = makeValidator('current');

function schemaProblem(type: TaskType, answer: unknown): string | null {
  const validate = validator(`#/components/schemas/${prefixes[type]}Response`);
  return validate(answer) ? null : JSON.stringify(validate.errors?.slice(0, 3));
}

describe.each(types)('combining %s answers', (type) => {
  it('N copies of one answer combine to that answer, and their agreement is 1', () => {
    fc.assert(
      fc.property(paramsArbitraries[type], taskIds, fc.integer({ min: 1, max: 4 }), (params, taskId, n) => {
        const answer = syntheticResponse(type, params, taskId);
        const copies = Array.from({ length: n }, () => structuredClone(answer));
        const combined = combineAnswers(type, params, copies);
        expect(combined.answer).toEqual(answer);
        expect(combined.agreement).toBe(1);
        expect(agreementOf(type, params, copies).agreement).toBe(1);
        for (const value of Object.values(combined.fields ?? {})) expect(value).toBe(1);
      }),
      RUNS,
    );
  });

  it("several workers' answers combine to one that passes the response schema and the task's answer rules", () => {
    fc.assert(
      fc.property(
        paramsArbitraries[type],
        fc.uniqueArray(taskIds, { minLength: 2, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 4, maxLength: 4 }),
        (params, seeds, weights) => {
          // Two workers give the same answer, the others their own: a majority exists for most parts.
          const answers = [seeds[0] as string, ...seeds].map((seed) => syntheticResponse(type, params, seed));
          const combined = combineAnswers(type, params, answers, { weights: weights.slice(0, answers.length) });
          expect(schemaProblem(type, combined.answer)).toBeNull();
          expect(checkAnswer({ type, params }, combined.answer)).toEqual([]);
          expect(combined.agreement).toBeGreaterThanOrEqual(0);
          expect(combined.agreement).toBeLessThanOrEqual(1);
          expect(combined.support).toHaveLength(answers.length);
          // The type's own rule gave it (not the fallback to the medoid answer), where the type has one.
          expect(combined.method).toBe(medoidTypes.includes(type) ? 'medoid' : 'combined');
        },
      ),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Hand-made cases.

const box = (left: number, top: number, width: number, height: number, label = 'car') => ({ left, top, width, height, label });
const boxParams = { attachment: 'https://example.com/a.jpg', attachment_type: 'image', objects_to_annotate: ['car', 'person'] };

describe('hand-made cases', () => {
  it('boxes: a car three workers drew is kept at the mean of their boxes; a person only one drew is dropped', () => {
    const answers = [
      { annotations: [box(100, 100, 50, 40)] },
      { annotations: [box(104, 98, 50, 44)] },
      { annotations: [box(102, 102, 56, 40), box(300, 300, 20, 60, 'person')] },
    ];
    const combined = combineAnswers('annotation', boxParams, answers);
    expect(combined.method).toBe('combined');
    expect(combined.answer).toEqual({ annotations: [box(102, 100, 52, 41.333333333333336)] });
    expect(combined.agreement).toBeGreaterThan(0.5);
    expect(combined.agreement).toBeLessThan(0.9);
  });

  it("docs/quality.md's worked example: a fourth and a fifth worker raise the agreement to 0.694 and 0.744", () => {
    const answers = [
      { annotations: [box(100, 100, 50, 40)] },
      { annotations: [box(104, 98, 50, 44)] },
      { annotations: [box(102, 102, 56, 40), box(300, 300, 20, 60, 'person')] },
    ];
    expect(combineAnswers('annotation', boxParams, answers).agreement).toBeCloseTo(0.61, 3);
    const four = [...answers, { annotations: [box(101, 100, 52, 42)] }];
    expect(combineAnswers('annotation', boxParams, four).agreement).toBeCloseTo(0.694, 3);
    const five = combineAnswers('annotation', boxParams, [...four, { annotations: [box(102, 101, 51, 41)] }]);
    expect(five.agreement).toBeCloseTo(0.744, 3);
    expect(five.answer).toEqual({ annotations: [{ left: 101.8, top: 100.2, width: 51.8, height: 41.4, label: 'car' }] });
  });

  it('boxes: weights decide which objects a majority found', () => {
    const answers = [{ annotations: [box(100, 100, 50, 40)] }, { annotations: [] }, { annotations: [] }];
    expect(combineAnswers('annotation', boxParams, answers).answer).toEqual({ annotations: [] });
    expect(combineAnswers('annotation', boxParams, answers, { weights: [3, 1, 1] }).answer).toEqual({
      annotations: [box(100, 100, 50, 40)],
    });
  });

  it('categorization: the weighted majority; multiple: every category more than half the weight chose, with its id', () => {
    const params = { attachment: 'a', attachment_type: 'text', categories: ['red', 'green', 'blue'] };
    const single = [{ category: 'red' }, { category: 'green' }, { category: 'green' }];
    expect(combineAnswers('categorization', params, single).answer).toEqual({ category: 'green' });
    expect(combineAnswers('categorization', params, single, { weights: [0.9, 0.3, 0.3] }).answer).toEqual({ category: 'red' });
    const ids = { ...params, allow_multiple: true, category_ids: { c1: 'red', c2: 'green', c3: 'blue' } };
    const multiple = [
      { category: ['red', 'blue'], category_id: ['c1', 'c3'] },
      { category: ['blue'], category_id: ['c3'] },
      { category: ['blue', 'green', 'red'], category_id: ['c3', 'c2', 'c1'] },
    ];
    const combined = combineAnswers('categorization', ids, multiple);
    expect(combined.answer).toEqual({ category: ['red', 'blue'], category_id: ['c1', 'c3'] });
    expect(combined.fields?.category).toBeCloseTo((0.5 + 2 / 3 + 1 / 3) / 3);
  });

  it('comparison: the choice by majority, each free-text field its medoid text; agreement per field', () => {
    const params = { attachment_type: 'text', attachments: ['a', 'b'], choices: ['left', 'right'], fields: { why: 'Why?' } };
    const answers = [
      { choice: 'left', fields: { why: 'sharper picture' } },
      { choice: 'right', fields: { why: 'sharper pictures' } },
      { choice: 'left', fields: { why: 'sharp picture' } },
    ];
    const combined = combineAnswers('comparison', params, answers);
    expect(combined.answer).toEqual({ choice: 'left', fields: { why: 'sharper picture' } });
    expect(combined.fields?.choice).toBeCloseTo(1 / 3);
    expect(Object.keys(combined.fields ?? {})).toEqual(['choice', 'fields.why']);
  });

  it('named entities: spans clustered by label and overlap, boundaries by majority, relationships kept by majority', () => {
    const text = 'Ada Lovelace met Charles Babbage in London.';
    const params = { text, labels: [{ name: 'PER' }, { name: 'LOC' }], relationships: [{ name: 'met', is_directed: false }] };
    const span = (id: string, start: number, end: number, label: string) => ({
      id,
      start,
      end,
      text: Array.from(text).slice(start, end).join(''),
      label,
    });
    const answers = [
      {
        annotations: [span('a', 0, 12, 'PER'), span('b', 17, 32, 'PER')],
        relationships: [{ id: 'r', source_ref: 'a', target_ref: 'b', name: 'met' }],
      },
      {
        annotations: [span('x', 0, 8, 'PER'), span('y', 17, 32, 'PER'), span('z', 36, 42, 'LOC')],
        relationships: [{ id: 'q', source_ref: 'y', target_ref: 'x', name: 'met' }],
      },
      { annotations: [span('a', 0, 12, 'PER'), span('c', 25, 32, 'PER')], relationships: [] },
    ];
    const combined = combineAnswers('namedentityrecognition', params, answers);
    expect(combined.method).toBe('combined');
    const out = combined.answer as { annotations: Json[]; relationships: Json[] };
    expect(out.annotations.map((s) => [s.start, s.end, s.label])).toEqual([
      [0, 12, 'PER'],
      [17, 32, 'PER'],
    ]);
    expect(out.relationships).toHaveLength(1);
    const ids = out.annotations.map((s) => s.id);
    expect([out.relationships[0]?.source_ref, out.relationships[0]?.target_ref].sort()).toEqual([...ids].sort());
  });

  it('lidar: each point takes the label of the largest weight, labels matched by name whatever their order', () => {
    const params = { attachments: ['https://example.com/0.pcd'], labels: ['road', 'car'] };
    const answers = [
      { labels: ['road', 'car'], frames: [{ frame: 0, point_labels: [0, 0, 1, -1] }] },
      { labels: ['car', 'road'], frames: [{ frame: 0, point_labels: [1, 0, 0, -1] }] },
      { labels: ['road', 'car'], frames: [{ frame: 0, point_labels: [0, 1, 1, 0] }] },
    ];
    expect(combineAnswers('lidarsegmentation', params, answers).answer).toEqual({
      labels: ['road', 'car'],
      frames: [{ frame: 0, point_labels: [0, 1, 1, -1] }],
    });
  });

  it('transcription: the medoid answer, the one closest to the others', () => {
    const params = { attachment: 'https://example.com/a.jpg', attachment_type: 'image', fields: { total: 'Total' } };
    const answers = [{ fields: { total: '12.50' } }, { fields: { total: '12.80' } }, { fields: { total: '12.5O' } }];
    const combined = combineAnswers('transcription', params, answers);
    expect(combined).toMatchObject({ method: 'medoid', medoid: 0, answer: answers[0] });
  });

  it('an answer combined against the rules falls back to the medoid answer', () => {
    const params = { attachment: 'a', attachment_type: 'text', categories: ['red', 'green'] };
    const answers = [{ category: 'red' }, { category: 'green' }, { category: 'green' }];
    const combined = combineAnswers('categorization', params, answers, { check: () => 'refused' });
    expect(combined).toMatchObject({ method: 'medoid', answer: { category: 'green' } });
  });

  it('segmentation whose masks the scorer was not given counts as disagreement', () => {
    const params = { attachment: 'https://example.com/a.jpg', labels: ['sky'] };
    const a = {
      annotations: { labeled: { sky: 'https://example.com/m1.png' }, unlabeled: null, combined: { image: 'x', indexedImage: 'y' } },
    };
    const b = {
      annotations: { labeled: { sky: 'https://example.com/m2.png' }, unlabeled: null, combined: { image: 'x', indexedImage: 'y' } },
    };
    expect(agreementOf('segmentannotation', params, [a, b]).agreement).toBe(0);
    expect(agreementOf('segmentannotation', params, [a, structuredClone(a)]).agreement).toBe(1);
  });

  it('refuses no answers and weights that are not above 0', () => {
    expect(() => combineAnswers('categorization', {}, [])).toThrow(/no answers/);
    expect(() => combineAnswers('categorization', {}, [{ category: 'a' }], { weights: [0] })).toThrow(/above 0/);
    expect(() => combineAnswers('nosuchtype', {}, [{}])).toThrow(/no scorer/);
  });
});

describe("the weight of a worker's answer by their evaluation accuracy (consensus.ts)", () => {
  it('is the log-odds of the accuracy, 0.75 without scores, capped at 0.99 and never under 0.1', () => {
    expect(accuracyWeight(0.9)).toBeCloseTo(Math.log(9), 12);
    expect(accuracyWeight(null)).toBeCloseTo(Math.log(3), 12);
    expect(accuracyWeight(1)).toBeCloseTo(Math.log(99), 12);
    for (const p of [0, 0.3, 0.5, 0.52]) expect(accuracyWeight(p)).toBe(0.1);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (a, b) => {
        expect(accuracyWeight(a)).toBeGreaterThanOrEqual(0.1);
        if (a <= b) expect(accuracyWeight(a)).toBeLessThanOrEqual(accuracyWeight(b));
      }),
      RUNS,
    );
  });

  const boxes = (left: number) => ({ annotations: [{ label: 'car', left, top: 10, width: 40, height: 30 }] });
  const params = { attachment: 'https://example.com/a.png', attachment_type: 'image', objects_to_annotate: ['car'] };
  it('lets one accurate worker outweigh two who agree and often err, for votes and for matched regions', () => {
    const weights = [accuracyWeight(0.95), accuracyWeight(0.6), accuracyWeight(0.6)];
    const categories = [{ category: 'cat' }, { category: 'dog' }, { category: 'dog' }];
    const cp = { attachment_type: 'text', attachment: 'a cat', categories: ['cat', 'dog'] };
    expect(combineAnswers('categorization', cp, categories, { weights }).answer).toEqual({ category: 'cat' });
    expect(combineAnswers('categorization', cp, categories).answer).toEqual({ category: 'dog' });
    // A box only the accurate worker drew is kept; the two others' box (elsewhere) is dropped.
    const shapes = [boxes(10), boxes(300), boxes(300)];
    expect(combineAnswers('annotation', params, shapes, { weights }).answer.annotations).toEqual(boxes(10).annotations);
    expect(combineAnswers('annotation', params, shapes).answer.annotations).toEqual(boxes(300).annotations);
  });
});
