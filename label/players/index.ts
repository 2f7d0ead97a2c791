import { categorization } from './categorization.ts';
import { comparison } from './comparison.ts';
import { fields } from './fields.ts';
import { imageannotation } from './imageannotation.ts';
import { ner } from './ner.ts';
import { textcollection } from './textcollection.ts';
import { legacyImage } from './legacy-image.ts';
import { lidarsegmentation } from './lidarsegmentation.ts';
import { videoplaybackannotation } from './videoplaybackannotation.ts';
import { audiotranscription } from './audiotranscription.ts';
import { segmentation } from './segmentation.ts';
import { documentTranscription } from './document.ts';
import type { PlayerFactory } from './types.ts';

/** The players by task type; a type without one is shown as not supported yet (skip or release it). */
export const players: Partial<Record<string, PlayerFactory>> = {
  categorization,
  imageannotation,
  annotation: legacyImage,
  pointannotation: legacyImage,
  lineannotation: legacyImage,
  polygonannotation: legacyImage,
  datacollection: fields,
  transcription: fields,
  comparison,
  textcollection,
  namedentityrecognition: ner,
  lidarsegmentation,
  videoplaybackannotation,
  audiotranscription,
  segmentannotation: segmentation,
  documenttranscription: documentTranscription,
};
