// Scoring two answers of one task against each other: a worker's against the expected one (training
// and evaluation tasks), or two workers' (agreement, consensus, review). One scorer per task type or
// family (scorers/); docs/quality.md explains each with a worked example. Pure and synchronous: the
// caller passes anything that must be fetched (segmentation masks) in the options.
import type { TaskType } from '../synthetic.ts';
import { clamp01, type Json, type ScoreOptions, type ScoreResult, type Scorer, settingsOf } from './scorers/common.ts';
import { categorization, comparison, dataCollection, textCollection } from './scorers/fields.ts';
import { imageAnnotation, singleGeometry } from './scorers/geometry.ts';
import { namedEntityRecognition } from './scorers/ner.ts';
import { lidarSegmentation, segmentAnnotation } from './scorers/segmentation.ts';
import { audioTranscription, documentTranscription, transcription } from './scorers/transcription.ts';
import { videoPlaybackAnnotation } from './scorers/video.ts';

export type {
  ClassResult,
  FieldResult,
  Mask,
  Match,
  MatchGroup,
  ScoreDetails,
  ScoreOptions,
  ScoreResult,
} from './scorers/common.ts';

const scorers: { [T in TaskType]: Scorer } = {
  annotation: singleGeometry('box'),
  pointannotation: singleGeometry('point'),
  lineannotation: singleGeometry('line'),
  polygonannotation: singleGeometry('polygon'),
  imageannotation: imageAnnotation,
  videoplaybackannotation: videoPlaybackAnnotation,
  segmentannotation: segmentAnnotation,
  lidarsegmentation: lidarSegmentation,
  namedentityrecognition: namedEntityRecognition,
  transcription,
  audiotranscription: audioTranscription,
  documenttranscription: documentTranscription,
  categorization,
  comparison,
  datacollection: dataCollection,
  textcollection: textCollection,
};

/** Whether there is a scorer for this task type (every type of the contract has one). */
export const isScoredType = (type: string): type is TaskType => Object.hasOwn(scorers, type);

/**
 * How well answer `b` agrees with answer `a` of a task of `type` with these `params`: a score in
 * [0, 1] (1: they agree completely) and details a person can read (`details.summary`, then matched
 * shapes with their IoU, per-field results or per-class IoU). Symmetric in a and b, except that
 * the details name each side. Throws on a type that has no scorer.
 */
export function scoreAnswers(type: string, params: Json, a: Json, b: Json, options?: ScoreOptions): ScoreResult {
  if (!isScoredType(type)) throw new Error(`no scorer for task type "${type}"`);
  const result = scorers[type](params, a, b, settingsOf(options));
  return { ...result, score: clamp01(result.score) };
}
