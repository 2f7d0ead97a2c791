// The parameter rules the contract states but JSON Schema cannot express (two fields compared,
// uniqueness across a tree, one field naming another). The request body has already passed the
// contract's schema (numbers and booleans typed) and any project parameters are merged in, so the
// shapes are known; these checks only relate values to each other. Each problem is reported as
// the contract's examples report theirs: `request/body/<path> <what is wrong>`.
//
// One module per task family under param-rules/: shape and geometry bounds (geometry.ts), label
// lists and trees (labels.ts), document features (documents.ts), text collection forms
// (textcollection.ts); problems.ts says where a problem is. This module is the entry.
import { invalid } from './errors.ts';
import type { Json } from './model.ts';
import { documentTranscription, labelledFeatures } from './param-rules/documents.ts';
import { geometryBounds, imageHypothesis, lineOrPolygon, offsetOnlyOnBoxes, videoHypothesis } from './param-rules/geometry.ts';
import { categoryIds, namedEntityRecognition, segmentLabels } from './param-rules/labels.ts';
import type { Problem } from './param-rules/problems.ts';
import { textCollection } from './param-rules/textcollection.ts';
import { sanitizeTextCollectionParams } from './sanitize.ts';

const rulesOf: Record<string, (params: Json) => Problem> = {
  pointannotation: (params) => offsetOnlyOnBoxes(params, 'pointannotation'),
  lineannotation: lineOrPolygon('lineannotation'),
  polygonannotation: lineOrPolygon('polygonannotation'),
  segmentannotation: segmentLabels,
  categorization: categoryIds,
  imageannotation: (params) => geometryBounds(params) ?? imageHypothesis(params),
  videoplaybackannotation: (params) => geometryBounds(params) ?? videoHypothesis(params),
  namedentityrecognition: namedEntityRecognition,
  documenttranscription: documentTranscription,
  textcollection: textCollection,
};

/**
 * Checks a task type's parameters (schema-valid, project parameters merged in) against the rules
 * the contract states but its schema cannot express. Null when they hold; otherwise a message
 * naming the field and the rule, for a 400. Types without such rules always pass.
 */
export function checkTaskParams(type: string, params: Record<string, unknown>): string | null {
  return rulesOf[type]?.(params) ?? null;
}

/**
 * A creation's params (a task's, a training task's) made what is stored, in place: Markdown
 * sanitized (textcollection), checked against the rules above (an `invalid` error naming the
 * field), and documenttranscription's deprecated feature `name` made `label`.
 */
export function acceptTaskParams(type: string, params: Json): void {
  if (type === 'textcollection') sanitizeTextCollectionParams(params);
  const problem = checkTaskParams(type, params);
  if (problem) throw invalid(problem);
  if (type === 'documenttranscription' && params.features !== undefined) params.features = labelledFeatures(params.features);
}
