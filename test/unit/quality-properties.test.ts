// The scorers (server/domain/quality/score.ts), property-based, for every task type, over the same
// arbitrary params as test mode's synthetic answers (test/support/task-params.ts) and the synthetic
// answers themselves: an answer scores 1 against itself; two workers' answers score the same
// whichever is a and which b; an answer with nothing in common scores 0; and the score never rises
// as an answer is made worse step by step (shapes dropped, characters changed, points relabelled).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Mask, scoreAnswers } from '../../server/domain/quality/score.ts';
import { syntheticResponse, type TaskType } from '../../server/domain/synthetic.ts';
import { paramsArbitraries, taskIds } from '../support/task-params.ts';

type Json = Record<string, unknown>;
const SEED = 20261125;
const RUNS = { numRuns: 150, seed: SEED };

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const clone = <T>(value: T): T => structuredClone(value);
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

// ---------------------------------------------------------------------------------------------
// Ways to change an answer.

/** Every shape moved 100 000 px to the right (and every frame range 100 000 frames on): no overlap is left. */
function farAway(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(farAway);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      typeof v === 'number' && ['x', 'left', 'start', 'end'].includes(k) ? v + 100_000 : farAway(v),
    ]),
  );
}

/** A character no synthetic text uses (CJK ideographs): it matches nothing, and has no case. */
const novel = (i: number) => String.fromCodePoint(0x4e00 + (i % 20_000));
/** The same number of code points, none shared with the original. */
const unlike = (text: string) => Array.from(text, (_, i) => novel(i)).join('');

/** The first `k` non-blank characters of these texts (taken in order, across texts) replaced by novel ones. */
function corrupt(texts: string[], k: number): string[] {
  let left = k;
  return texts.map((text) =>
    Array.from(text)
      .map((c) => {
        if (left <= 0 || /\s/u.test(c)) return c;
        left -= 1;
        return novel(left + 1000);
      })
      .join(''),
  );
}

/** Applies `change` to the string values at these keys of a record (in key order), giving back the record. */
function mapTexts(record: unknown, keys: (key: string) => boolean, change: (texts: string[]) => string[]): Json {
  if (!isRecord(record)) return {};
  const entries = Object.entries(record).filter(([k, v]) => keys(k) && typeof v === 'string');
  const changed = change(entries.map(([, v]) => v as string));
  return { ...record, ...Object.fromEntries(entries.map(([k], i) => [k, changed[i]])) };
}

const dropFirst = (answer: Json, key: string, k: number): Json => ({ ...answer, [key]: list(answer[key]).slice(k) });

/** Lidar: the first `k` points (over all frames) moved to another label (the next index, -1 after the last). */
function relabel(answer: Json, k: number | 'all'): Json {
  const count = Array.isArray(answer.labels) ? answer.labels.length : 0;
  let left = k === 'all' ? Number.POSITIVE_INFINITY : k;
  const next = (i: number) => ((i + 2) % (count + 1)) - 1;
  return {
    ...answer,
    frames: list(answer.frames).map((f) => ({
      ...f,
      point_labels: (f.point_labels as number[]).map((i) => (left-- > 0 ? next(i) : i)),
    })),
  };
}

// Segmentation answers name masks by URL; the scorer reads decoded masks. Each URL gets a small
// mask drawn from its name, so that every answer's labels can be scored.
const MASK = { width: 12, height: 8 };
function maskOf(url: string): Mask {
  let h = 0x811c9dc5;
  for (let i = 0; i < url.length; i++) h = Math.imul(h ^ url.charCodeAt(i), 0x01000193);
  const data = Array.from({ length: MASK.width * MASK.height }, (_, i) => (((Math.imul(h ^ i, 0x9e3779b1) >>> 7) & 3) === 0 ? 1 : 0));
  data[Math.abs(h) % data.length] = 1;
  return { ...MASK, data };
}
const urlsIn = (answer: Json): string[] => Object.values(((answer.annotations as Json).labeled ?? {}) as Json).flat() as string[];
const masksFor = (...answers: Json[]) => new Map(answers.flatMap(urlsIn).map((u) => [u, maskOf(u)]));

/** Segmentation: b's masks as new files; `paint(masks)` says what b paints in place of a label's masks (one list per label). */
function repaint(answer: Json, name: string, paint: (masks: Mask[]) => number[][]): { answer: Json; masks: Map<string, Mask> } {
  const masks = new Map<string, Mask>();
  const copy = clone(answer);
  const labeled = (copy.annotations as Json).labeled as Json;
  for (const [label, value] of Object.entries(labeled)) {
    const urls = Array.isArray(value) ? (value as string[]) : [value as string];
    const painted = paint(urls.map(maskOf));
    const renamed = urls.map((url, i) => {
      masks.set(`${url}#${name}`, { ...MASK, data: painted[i] ?? [] });
      return `${url}#${name}`;
    });
    labeled[label] = Array.isArray(value) ? renamed : renamed[0];
  }
  return { answer: copy, masks };
}

// ---------------------------------------------------------------------------------------------
// Per type: how to make an answer share nothing with another, and how to make it worse by steps.

interface TypeCase {
  /** An answer with nothing in common with `a` (undefined: this answer leaves no way to make one). */
  disjoint(params: Json, a: Json): Json | undefined;
  /** `a` made worse by `k` steps (0: a itself), or undefined when the answer has no k-th step. */
  worse(params: Json, a: Json, k: number): Json | undefined;
}

const shapes = (key = 'annotations'): TypeCase => ({
  disjoint: (_p, a) => (list(a[key]).length > 0 ? (farAway(a) as Json) : undefined),
  worse: (_p, a, k) => (k <= list(a[key]).length ? dropFirst(a, key, k) : undefined),
});

const textsOf = (value: unknown): string[] =>
  isRecord(value) ? Object.values(value).filter((v): v is string => typeof v === 'string') : [];
const totalLength = (texts: string[]) => texts.join('').replace(/\s/gu, '').length;

const cases: Record<TaskType, TypeCase> = {
  annotation: shapes(),
  pointannotation: shapes(),
  lineannotation: shapes(),
  polygonannotation: shapes(),
  imageannotation: shapes(),
  videoplaybackannotation: shapes(),
  documenttranscription: {
    disjoint: (_p, a) => (list(a.annotations).length > 0 ? (farAway(a) as Json) : undefined),
    worse: (_p, a, k) => {
      const regions = list(a.annotations);
      if (k > totalLength(regions.map((r) => r.text as string))) return undefined;
      const texts = corrupt(
        regions.map((r) => r.text as string),
        k,
      );
      return { ...a, annotations: regions.map((r, i) => ({ ...r, text: texts[i] })) };
    },
  },
  namedentityrecognition: {
    disjoint: (_p, a) =>
      list(a.annotations).length > 0
        ? { ...a, annotations: list(a.annotations).map((s) => ({ ...s, label: `${s.label}\u0001` })) }
        : undefined,
    worse: (_p, a, k) => (k <= list(a.annotations).length ? dropFirst(a, 'annotations', k) : undefined),
  },
  lidarsegmentation: {
    disjoint: (_p, a) => relabel(a, 'all'),
    worse: (_p, a, k) => (k <= list(a.frames).length * 32 ? relabel(a, k * 3) : undefined),
  },
  segmentannotation: { disjoint: () => undefined, worse: () => undefined }, // masks: a describe of its own below
  categorization: {
    disjoint: (_p, a) => ({
      ...a,
      category: Array.isArray(a.category) ? a.category.map((c) => unlike(String(c))) : unlike(String(a.category)),
    }),
    worse: (_p, a, k) => {
      if (!Array.isArray(a.category)) return k === 0 ? a : k === 1 ? { ...a, category: unlike(String(a.category)) } : undefined;
      return k <= a.category.length ? { ...a, category: a.category.slice(k) } : undefined;
    },
  },
  comparison: {
    disjoint: (_p, a) => ({
      ...(a.choice === undefined ? {} : { choice: unlike(String(a.choice)) }),
      ...(a.fields === undefined
        ? {}
        : {
            fields: mapTexts(
              a.fields,
              () => true,
              (t) => t.map(unlike),
            ),
          }),
    }),
    worse: (_p, a, k) =>
      k <= totalLength(textsOf(a.fields))
        ? {
            ...a,
            ...(a.fields
              ? {
                  fields: mapTexts(
                    a.fields,
                    () => true,
                    (t) => corrupt(t, k),
                  ),
                }
              : {}),
          }
        : undefined,
  },
  datacollection: {
    disjoint: (_p, a) => ({
      ...a,
      fields: mapTexts(
        a.fields,
        () => true,
        (t) => t.map(unlike),
      ),
    }),
    worse: (_p, a, k) =>
      k <= totalLength(textsOf(a.fields))
        ? {
            ...a,
            fields: mapTexts(
              a.fields,
              () => true,
              (t) => corrupt(t, k),
            ),
          }
        : undefined,
  },
  transcription: {
    disjoint: (_p, a) =>
      textsOf(a.fields).length + list(a.repeatable_fields).length === 0
        ? undefined
        : {
            ...(a.fields
              ? {
                  fields: mapTexts(
                    a.fields,
                    () => true,
                    (t) => t.map(unlike),
                  ),
                }
              : {}),
            ...(a.repeatable_fields
              ? {
                  repeatable_fields: list(a.repeatable_fields).map((r) =>
                    mapTexts(
                      r,
                      () => true,
                      (t) => t.map(unlike),
                    ),
                  ),
                }
              : {}),
          },
    worse: (params, a, k) => {
      const described = (params.repeatable_fields ?? {}) as Json;
      const free = (key: string) => !isRecord(described[key]);
      const rows = list(a.repeatable_fields);
      if (k > totalLength([...textsOf(a.fields), ...rows.flatMap((r) => textsOf(mapTexts(r, free, (t) => t)))])) return undefined;
      // Characters of the fields first, then of each row's free-text keys, k in all.
      const inFields = Math.min(k, totalLength(textsOf(a.fields)));
      let left = k - inFields;
      return {
        ...a,
        ...(a.fields
          ? {
              fields: mapTexts(
                a.fields,
                () => true,
                (t) => corrupt(t, inFields),
              ),
            }
          : {}),
        ...(a.repeatable_fields
          ? {
              repeatable_fields: rows.map((r) =>
                mapTexts(r, free, (t) => {
                  const here = Math.min(left, totalLength(t));
                  left -= here;
                  return corrupt(t, here);
                }),
              ),
            }
          : {}),
      };
    },
  },
  audiotranscription: {
    disjoint: (_p, a) => ({ ...a, transcript: unlike(String(a.transcript)) }),
    worse: (_p, a, k) =>
      k <= totalLength([String(a.transcript)]) ? { ...a, transcript: corrupt([String(a.transcript)], k)[0] } : undefined,
  },
  textcollection: {
    disjoint: (_p, a) => (Object.keys(a.annotations as Json).length > 0 ? { annotations: {} } : undefined),
    worse: (_p, a, k) => {
      const entries = Object.entries(a.annotations as Json);
      return k <= entries.length ? { annotations: Object.fromEntries(entries.slice(k)) } : undefined;
    },
  },
};

const TYPES = Object.keys(cases) as TaskType[];
const twoAnswers = (type: TaskType) =>
  fc.tuple(paramsArbitraries[type], taskIds, taskIds).map(([params, s1, s2]) => ({
    params,
    a: syntheticResponse(type, params, s1),
    b: syntheticResponse(type, params, s2),
  }));

describe.each(TYPES.filter((t) => t !== 'segmentannotation'))('%s scorer', (type) => {
  const c = cases[type];

  it('scores an answer against itself 1, and two answers the same whichever comes first', () => {
    fc.assert(
      fc.property(twoAnswers(type), ({ params, a, b }) => {
        expect(scoreAnswers(type, params, a, clone(a)).score).toBe(1);
        const ab = scoreAnswers(type, params, a, b);
        const ba = scoreAnswers(type, params, b, a);
        expect(ab.score).toBeGreaterThanOrEqual(0);
        expect(ab.score).toBeLessThanOrEqual(1);
        expect(ba.score).toBeCloseTo(ab.score, 12);
        expect(ab.details.summary.length).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  it('scores an answer with nothing in common 0', () => {
    let checked = 0;
    fc.assert(
      fc.property(twoAnswers(type), ({ params, a }) => {
        const other = c.disjoint(params, a);
        if (!other) return;
        checked += 1;
        expect(scoreAnswers(type, params, a, other).score).toBe(0);
        expect(scoreAnswers(type, params, other, a).score).toBe(0);
      }),
      RUNS,
    );
    expect(checked).toBeGreaterThan(RUNS.numRuns / 2);
  });

  it('never scores higher as the answer is made worse step by step', () => {
    fc.assert(
      fc.property(twoAnswers(type), fc.integer({ min: 1, max: 3 }), ({ params, a }, stride) => {
        let previous = 1;
        for (let k = 0; k <= 6; k++) {
          const worse = c.worse(params, a, k * stride);
          if (!worse) break;
          const { score } = scoreAnswers(type, params, a, worse);
          if (k === 0) expect(score).toBe(1);
          expect(score).toBeLessThanOrEqual(previous + 1e-12);
          previous = score;
        }
      }),
      RUNS,
    );
  });
});

describe('segmentannotation scorer (masks passed by URL)', () => {
  const answers = twoAnswers('segmentannotation');

  it('scores itself 1, is symmetric, scores the complement 0, and falls as masks are erased', () => {
    fc.assert(
      fc.property(answers, ({ params, a, b }) => {
        const masks = masksFor(a, b);
        expect(scoreAnswers('segmentannotation', params, a, clone(a), { masks }).score).toBe(1);
        // Without masks, the same files still agree.
        expect(scoreAnswers('segmentannotation', params, a, clone(a)).score).toBe(1);
        const ab = scoreAnswers('segmentannotation', params, a, b, { masks }).score;
        expect(scoreAnswers('segmentannotation', params, b, a, { masks }).score).toBeCloseTo(ab, 12);

        // Each label painted where a's masks of that label are not (the first mask; any others empty).
        const inverse = repaint(a, 'inverse', (list) =>
          list.map((m, n) => Array.from(m.data, (_, i) => (n === 0 && !list.some((other) => other.data[i]) ? 1 : 0))),
        );
        expect(scoreAnswers('segmentannotation', params, a, inverse.answer, { masks: new Map([...masks, ...inverse.masks]) }).score).toBe(
          0,
        );

        let previous = 1;
        for (let k = 0; k <= 4; k++) {
          // Each step erases a quarter more of every mask's painted pixels (nested: earlier erasures stay).
          const erased = repaint(a, `erased${k}`, (list) =>
            list.map((m) => {
              const on = Array.from(m.data, (v, i) => (v ? i : -1)).filter((i) => i >= 0);
              const gone = new Set(on.slice(0, Math.floor((on.length * k) / 4)));
              return Array.from(m.data, (v, i) => (v && !gone.has(i) ? 1 : 0));
            }),
          );
          const { score } = scoreAnswers('segmentannotation', params, a, erased.answer, { masks: new Map([...masks, ...erased.masks]) });
          expect(score).toBeLessThanOrEqual(previous + 1e-12);
          previous = score;
        }
        expect(previous).toBe(0);
      }),
      RUNS,
    );
  });
});

describe('every scorer, on answers that break the rules', () => {
  it('never throws and stays in [0, 1], whatever the answers hold (an old expected answer may not pass today’s rules)', () => {
    const junk = fc.anything({ maxDepth: 2, withNullPrototype: false });
    // Records with the keys the scorers read, holding anything.
    const keysRead = fc.constantFrom(
      ...['left', 'top', 'width', 'height', 'x', 'y', 'rx', 'ry', 'rotation', 'vertices', 'label', 'type', 'frame', 'frames'],
      ...['start', 'end', 'id', 'source_ref', 'target_ref', 'name', 'text', 'page', 'point_labels', 'labeled', 'from_seconds'],
    );
    const record = fc.dictionary(keysRead, fc.oneof(junk, fc.array(fc.dictionary(keysRead, junk), { maxLength: 3 })), { maxKeys: 6 });
    const answers = fc.dictionary(
      fc.constantFrom(
        'annotations',
        'events',
        'fields',
        'repeatable_fields',
        'category',
        'choice',
        'transcript',
        'labels',
        'frames',
        'relationships',
      ),
      fc.oneof(junk, record, fc.array(record, { maxLength: 4 })),
    );
    fc.assert(
      fc.property(fc.constantFrom(...TYPES), answers, answers, (type, a, b) => {
        const { score } = scoreAnswers(type, {}, a, b);
        expect(score >= 0 && score <= 1).toBe(true);
      }),
      { numRuns: 150, seed: SEED },
    );
  });
});
