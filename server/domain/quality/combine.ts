// Combining the answers of several workers to one task (overlap): the agreement of the answers,
// and one combined answer, by type (combiners/; docs/quality.md "Consensus"):
//   choices (categorization, comparison's choice, textcollection's constrained fields)  weighted majority
//   shapes on an image (annotation, point, line, polygon, imageannotation)               matched-region averaging
//   namedentityrecognition                                                               span clustering
//   comparison and datacollection fields, textcollection free text                       medoid text per field
//   lidarsegmentation                                                                    per-point weighted vote
//   transcription, audiotranscription, documenttranscription, segmentannotation,
//   videoplaybackannotation                                                              medoid answer
// The medoid answer is the one with the largest weighted sum of scores against the others (the
// type's scorer). Segmentation masks are files named by URL, which a pure combiner cannot draw,
// and video tracks are too costly to vote on (WORKFORCE.md §7): both take the medoid, as the
// transcriptions do (a per-character vote of texts that differ in length reads badly).
// A combined answer that breaks the task's answer rules (answer-rules.ts), or the optional
// `check` (the contract's response schema), is replaced by the medoid answer, which passed them.
import { checkAnswer } from '../../../shared/answer-rules.ts';
import { categorization, comparison, dataCollection, textCollection } from './combiners/choices.ts';
import { type Ballot, type Combiner, type Json, total } from './combiners/common.ts';
import { imageAnnotation, singleGeometry } from './combiners/geometry.ts';
import { lidarSegmentation } from './combiners/lidar.ts';
import { namedEntityRecognition } from './combiners/ner.ts';
import { isScoredType, type ScoreOptions, scoreAnswers } from './score.ts';
import type { TaskType } from '../synthetic.ts';
import { clamp01, type ScoreResult, settingsOf } from './scorers/common.ts';

const medoid: Combiner = (ballot) => ballot.answers[ballot.rank[0] ?? 0] ?? {};

const combiners: { [T in TaskType]: Combiner } = {
  annotation: singleGeometry('box'),
  pointannotation: singleGeometry('point'),
  lineannotation: singleGeometry('line'),
  polygonannotation: singleGeometry('polygon'),
  imageannotation: imageAnnotation,
  videoplaybackannotation: medoid,
  segmentannotation: medoid,
  lidarsegmentation: lidarSegmentation,
  namedentityrecognition: namedEntityRecognition,
  transcription: medoid,
  audiotranscription: medoid,
  documenttranscription: medoid,
  categorization,
  comparison,
  datacollection: dataCollection,
  textcollection: textCollection,
};

export interface Agreement {
  /** The mean score over every pair of answers, in [0, 1] (1 with fewer than two answers). */
  agreement: number;
  /** For types whose scorer compares fields: the mean score of each field (its path) over the pairs that compare it. */
  fields?: Record<string, number>;
  /** Each answer's weighted mean score against the others (1 with one answer). */
  support: number[];
}

export interface CombineOptions extends ScoreOptions {
  /** One weight per answer, above 0 (default 1 each): a worker's accuracy, for instance. */
  weights?: readonly number[];
  /** A further check of the combined answer (the contract's response schema): a problem, or null. */
  check?: (answer: Json) => string | null;
}

export interface Combination extends Agreement {
  /** The combined answer: valid for the type's response schema and the task's answer rules when the answers were. */
  answer: Json;
  /** Each answer's score against the combined answer (the type's scorer, as agreement counts a pair). */
  scores: number[];
  /** Each answer's mean score against the other answers, unweighted (1 with one answer). */
  peers: number[];
  /** `combined` (by the type's rule) or `medoid` (the most representative answer, as it is). */
  method: 'combined' | 'medoid';
  /** The index of the medoid answer (the largest weighted sum of scores against the others). */
  medoid: number;
}

/**
 * A pair's score as agreement counts it. A segmentation label whose masks could not be compared
 * (not given to the scorer) counts as disagreement, so that such answers are not passed unchecked.
 */
function pairScore(result: ScoreResult): number {
  const d = result.details;
  if (d.kind !== 'classes' || d.unscored.length === 0) return result.score;
  const present = d.classes.filter((c) => c.union > 0);
  return clamp01(present.reduce((s, c) => s + c.iou, 0) / (present.length + d.unscored.length));
}

interface Pairwise extends Agreement {
  scores: number[][];
  weights: number[];
}

function pairwise(type: string, params: Json, answers: readonly Json[], options: CombineOptions): Pairwise {
  if (!isScoredType(type)) throw new Error(`no scorer for task type "${type}"`);
  const n = answers.length;
  const weights = answers.map((_, i) => options.weights?.[i] ?? 1);
  if (weights.some((w) => !(w > 0) || !Number.isFinite(w))) throw new Error('every weight must be a number above 0');
  const scores = answers.map(() => new Array<number>(n).fill(1));
  const fieldSums = new Map<string, { sum: number; n: number }>();
  let sum = 0;
  let pairs = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const result = scoreAnswers(type, params, answers[i] as Json, answers[j] as Json, options);
      const score = pairScore(result);
      (scores[i] as number[])[j] = score;
      (scores[j] as number[])[i] = score;
      sum += score;
      pairs += 1;
      if (result.details.kind === 'fields') {
        for (const f of result.details.fields) {
          const entry = fieldSums.get(f.path) ?? { sum: 0, n: 0 };
          entry.sum += f.score;
          entry.n += 1;
          fieldSums.set(f.path, entry);
        }
      }
    }
  }
  const support = answers.map((_, i) => {
    const others = total(weights) - (weights[i] as number);
    if (others <= 0) return 1;
    return (
      answers.reduce<number>((s, _a, j) => (j === i ? s : s + (weights[j] as number) * ((scores[i] as number[])[j] as number)), 0) / others
    );
  });
  const fields =
    fieldSums.size > 0
      ? Object.fromEntries([...fieldSums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([p, e]) => [p, e.sum / e.n]))
      : undefined;
  return { agreement: pairs === 0 ? 1 : sum / pairs, ...(fields ? { fields } : {}), support, scores, weights };
}

/** How well a set of answers to one task agree: the mean pairwise score (per field too where the type has fields). */
export function agreementOf(type: string, params: Json, answers: readonly Json[], options: CombineOptions = {}): Agreement {
  const { agreement, fields, support } = pairwise(type, params, answers, options);
  return { agreement, ...(fields ? { fields } : {}), support };
}

/**
 * The answers of several workers to one task of `type` combined into one (see the head of this
 * file), with their agreement. Throws on a type without a scorer, on no answers, and on a weight
 * that is not above 0.
 */
export function combineAnswers(type: string, params: Json, answers: readonly Json[], options: CombineOptions = {}): Combination {
  if (answers.length === 0) throw new Error('no answers to combine');
  const p = pairwise(type, params, answers, options);
  const all = total(p.weights);
  const pull = (i: number) => (p.support[i] as number) * (all - (p.weights[i] as number));
  const rank = answers.map((_, i) => i).sort((i, j) => pull(j) - pull(i) || i - j);
  const best = rank[0] as number;
  const agreement: Agreement = { agreement: p.agreement, ...(p.fields ? { fields: p.fields } : {}), support: p.support };
  const n = answers.length;
  const peers = p.scores.map((row, i) => (n < 2 ? 1 : row.reduce((s, x, j) => (j === i ? s : s + x), 0) / (n - 1)));
  const fallback: Combination = {
    ...agreement,
    answer: answers[best] as Json,
    scores: [...(p.scores[best] as number[])],
    peers,
    method: 'medoid',
    medoid: best,
  };
  if (answers.length === 1 || combiners[type as TaskType] === medoid) return fallback;
  const settings = settingsOf(options);
  const ballot: Ballot = {
    params,
    answers: [...answers],
    weights: p.weights,
    rank,
    threshold: settings.threshold,
    tolerance: settings.tolerance,
    score: (a, b) => scoreAnswers(type, params, a, b, options).score,
  };
  let answer: Json;
  try {
    answer = (combiners[type as TaskType] as Combiner)(ballot);
  } catch {
    return fallback;
  }
  if (checkAnswer({ type, params }, answer).length > 0 || options.check?.(answer)) return fallback;
  const scores = answers.map((a) => pairScore(scoreAnswers(type, params, answer, a, options)));
  return { ...agreement, answer, scores, peers, method: 'combined', medoid: best };
}
