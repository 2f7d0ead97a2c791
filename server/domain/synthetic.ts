// Synthetic responses of test mode (docs/decisions/0003-tasks.md). No person works on a test task: the server
// completes it at once with an answer a careful worker could have given. The answer validates
// against the type's `<Type>Response` schema and respects the task's own params (labels from its
// label lists, shapes inside the image, answers within each field's bounds, spans inside the
// text). It is a pure function of (type, params, seed): the server passes the task_id, or
// `${task_id}:${times_redone}` for a redo, so a task reads the same on every retrieval and a
// redo gets a new answer.
//
// One module per task family under synthetic/, on shared parts: nominal media (nominal.ts), seeded
// randomness and the words a synthetic worker writes (random.ts), shapes in a canvas (geometry.ts),
// annotation attributes (attributes.ts). This module is the entry: what other code imports.
import type { components } from '../../generated/current.ts';
import type { Json } from './model.ts';
import { audioTranscriptionResponse, documentTranscriptionResponse } from './synthetic/transcripts.ts';
import { categorizationResponse, comparisonResponse, dataCollectionResponse, transcriptionResponse } from './synthetic/forms.ts';
import {
  boxAnnotationResponse,
  imageAnnotationResponse,
  lineAnnotationResponse,
  pointAnnotationResponse,
  polygonAnnotationResponse,
} from './synthetic/image.ts';
import { namedEntityRecognitionResponse } from './synthetic/named-entities.ts';
import { SeededRandom } from './synthetic/random.ts';
import { lidarSegmentationResponse, segmentAnnotationResponse } from './synthetic/segmentation.ts';
import { textCollectionResponse } from './synthetic/textcollection.ts';
import { videoPlaybackAnnotationResponse } from './synthetic/video.ts';

export {
  NOMINAL_AUDIO_SECONDS,
  NOMINAL_IMAGE,
  NOMINAL_LIDAR_POINTS,
  NOMINAL_PDF_PAGE,
  NOMINAL_VIDEO_SECONDS,
  SYNTHETIC_MASK_ORIGIN,
} from './synthetic/nominal.ts';

type Schemas = components['schemas'];
export type TaskType = Schemas['TaskType'];

/** The test-mode `response` of a task of `type` with these stored `params`, the same for the same `seed`. */
export function syntheticResponse(type: TaskType, params: Record<string, unknown>, seed: string): Record<string, unknown> {
  const generate = generators[type] as Generator | undefined;
  if (!generate) throw new Error(`no synthetic response for task type "${String(type)}"`);
  return generate(params, new SeededRandom(seed), seed);
}

type Generator = (params: Json, rng: SeededRandom, seed: string) => Record<string, unknown>;

// One generator per type, each in the module of its family, next to the helpers it uses.
const generators: { [T in TaskType]: Generator } = {
  annotation: boxAnnotationResponse,
  pointannotation: pointAnnotationResponse,
  lineannotation: lineAnnotationResponse,
  polygonannotation: polygonAnnotationResponse,
  segmentannotation: segmentAnnotationResponse,
  categorization: categorizationResponse,
  comparison: comparisonResponse,
  datacollection: dataCollectionResponse,
  transcription: transcriptionResponse,
  audiotranscription: audioTranscriptionResponse,
  imageannotation: imageAnnotationResponse,
  textcollection: textCollectionResponse,
  namedentityrecognition: namedEntityRecognitionResponse,
  documenttranscription: documentTranscriptionResponse,
  videoplaybackannotation: videoPlaybackAnnotationResponse,
  lidarsegmentation: lidarSegmentationResponse,
};
