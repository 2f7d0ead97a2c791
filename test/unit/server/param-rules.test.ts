// The parameter rules the contract states but its schema cannot express (checkTaskParams): each
// rule broken once (the message names the field), each valid variant accepted, every contract
// example accepted. Over HTTP (400, nothing stored): test/server/param-rules.test.ts.
import { describe, expect, it } from 'vitest';
import { checkTaskParams } from '../../../server/domain/param-rules.ts';
import { loadContract } from '../../../server/http/contract.ts';
import {
  image,
  textCollection,
  formCollection,
  ner,
  imageAnnotation,
  documentTranscription,
  variant,
  type Params,
} from '../../support/param-fixtures.ts';

describe('checkTaskParams: valid parameters pass', () => {
  it.each<[string, string, Params]>([
    ['line, no max', 'lineannotation', { attachment: image, objects_to_annotate: ['lane'], min_vertices: 5 }],
    ['line, max null', 'lineannotation', { attachment: image, objects_to_annotate: ['lane'], min_vertices: 5, max_vertices: null }],
    ['polygon, max = min', 'polygonannotation', { attachment: image, objects_to_annotate: ['a'], min_vertices: 3, max_vertices: 3 }],
    ['polygon, max without min (default 1)', 'polygonannotation', { attachment: image, objects_to_annotate: ['a'], max_vertices: 1 }],
    [
      'annotation with an offset attribute',
      'annotation',
      { attachment: image, objects_to_annotate: ['car'], annotation_attributes: { dx: { type: 'offset' } } },
    ],
    [
      'point with other attributes',
      'pointannotation',
      { attachment: image, objects_to_annotate: ['a'], annotation_attributes: { h: { type: 'angle' }, p: { choices: ['y', 'n'] } } },
    ],
    ['segmentation, disjoint labels', 'segmentannotation', { attachment: image, labels: ['road'], instance_labels: ['car'] }],
    [
      'categorization, ids of some categories',
      'categorization',
      { attachment_type: 'text', attachment: 't', categories: ['a', 'b', 'c'], category_ids: { x: 'a', y: 'b' } },
    ],
    ['imageannotation', 'imageannotation', imageAnnotation()],
    [
      'videoplaybackannotation',
      'videoplaybackannotation',
      {
        attachment: 'https://example.com/v.mp4',
        geometries: { line: { objects_to_annotate: ['lane'], min_vertices: '2', max_vertices: '2' } },
      },
    ],
    ['namedentityrecognition', 'namedentityrecognition', ner()],
    [
      'namedentityrecognition, unnamed relationships',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.relationships = [{ source_label: 'PERSON' }, { target_label: 'PERSON' }, {}];
      }),
    ],
    ['documenttranscription', 'documenttranscription', documentTranscription()],
    [
      'documenttranscription, no features, unlabeled pre-labels',
      'documenttranscription',
      variant(documentTranscription, (p) => {
        delete p.features;
        p.hypothesis.annotations = [p.hypothesis.annotations[1]];
      }),
    ],
    ['textcollection, every field type', 'textcollection', textCollection()],
    ['textcollection, forms', 'textcollection', formCollection()],
    ['a type without such rules', 'comparison', { attachment_type: 'text', attachments: ['a', 'b'], choices: ['x'] }],
    ['an unknown type', 'no-such-type', { anything: true }],
  ])('%s', (_name, type, params) => {
    expect(checkTaskParams(type, params)).toBeNull();
  });

  it.each(['current', 'legacy'] as const)('every request example of the %s contract passes', (gen) => {
    const contract = loadContract(gen);
    const misspelt: Record<string, string> = { documentranscription: 'documenttranscription', segmentannoation: 'segmentannotation' };
    let count = 0;
    for (const [path, item] of Object.entries<any>(contract.doc.paths)) {
      const m = /^\/v1\/(?:task|training_tasks|evaluation_tasks)\/([a-z]+)$/.exec(path);
      if (!m || !item.post) continue;
      const type = misspelt[m[1]!] ?? m[1]!;
      for (const [name, example] of Object.entries<any>(item.post.requestBody.content['application/json'].examples ?? {})) {
        const value = contract.resolve(example)!.value;
        // With a project the parameters are checked once merged; alone they may be incomplete.
        if (value.project !== undefined || value.batch !== undefined) continue;
        expect(checkTaskParams(type, value), `${path} ${name}`).toBeNull();
        count++;
      }
    }
    expect(count).toBeGreaterThan(10);
  });

  it('the project-only text-collection example passes once merged with the fields of the other example', () => {
    const examples = loadContract('current').doc.paths['/v1/task/textcollection'].post.requestBody.content['application/json'].examples;
    const { fields } = examples.podcastReview.value;
    expect(checkTaskParams('textcollection', { ...examples.projectWithHypothesis.value, fields })).toBeNull();
  });
});

describe('checkTaskParams: each rule, broken', () => {
  it.each<[string, string, Params, string]>([
    // Line and polygon annotation: max_vertices at least min_vertices.
    [
      'line max below min',
      'lineannotation',
      { attachment: image, objects_to_annotate: ['lane'], min_vertices: 3, max_vertices: 2 },
      'request/body/max_vertices (2) must be at least min_vertices (3)',
    ],
    [
      'polygon max below min',
      'polygonannotation',
      { attachment: image, objects_to_annotate: ['a'], min_vertices: '4', max_vertices: '3' },
      'request/body/max_vertices (3) must be at least min_vertices (4)',
    ],
    // An offset attribute only on box annotation.
    [
      'offset on points',
      'pointannotation',
      { attachment: image, objects_to_annotate: ['a'], annotation_attributes: { dx: { type: 'offset' } } },
      'request/body/annotation_attributes/dx/type "offset" is not accepted on pointannotation tasks',
    ],
    [
      'offset on lines',
      'lineannotation',
      { attachment: image, objects_to_annotate: ['a'], annotation_attributes: { dx: { type: 'offset' } } },
      'annotation_attributes/dx/type "offset" is not accepted on lineannotation',
    ],
    [
      'offset on polygons',
      'polygonannotation',
      { attachment: image, objects_to_annotate: ['a'], annotation_attributes: { dx: { type: 'offset' } } },
      'annotation_attributes/dx/type "offset" is not accepted on polygonannotation',
    ],
    // Segmentation: a label not in both lists.
    [
      'segmentation label in both lists',
      'segmentannotation',
      { attachment: image, labels: ['road', 'car'], instance_labels: ['person', 'car'] },
      'request/body/instance_labels/1 "car" is also in labels',
    ],
    // Categorization: category_ids.
    [
      'category id naming no category',
      'categorization',
      { attachment_type: 'text', attachment: 't', categories: ['a'], category_ids: { x: 'a', y: 'zzz' } },
      'request/body/category_ids/y "zzz" is not one of categories',
    ],
    [
      'two ids naming one category',
      'categorization',
      { attachment_type: 'text', attachment: 't', categories: ['a', 'b'], category_ids: { x: 'a', y: 'a' } },
      'request/body/category_ids/y names "a", which the id "x" names already',
    ],
    // GeometrySpec: max_vertices at least min_vertices, per geometry (both types).
    [
      'image geometry max below min',
      'imageannotation',
      variant(imageAnnotation, (p) => {
        p.geometries.polygon.max_vertices = 2;
      }),
      'request/body/geometries/polygon/max_vertices (2) must be at least min_vertices (3)',
    ],
    [
      'video geometry max below min',
      'videoplaybackannotation',
      { attachments: [image], geometries: { line: { objects_to_annotate: ['l'], min_vertices: 5, max_vertices: 4 } } },
      'request/body/geometries/line/max_vertices (4) must be at least min_vertices (5)',
    ],
    // Image hypothesis: labels of the geometry.
    [
      'image pre-label of another geometry',
      'imageannotation',
      variant(imageAnnotation, (p) => {
        p.hypothesis.annotations.push({ uuid: '9b2d7c41-0e5f-4a6b-8c7d-2e3f4a5b6c70', type: 'point', label: 'car', x: 1, y: 1 });
      }),
      'request/body/hypothesis/annotations/2/type "point" is not one of the task\'s geometries',
    ],
    [
      'image pre-label with a foreign label',
      'imageannotation',
      variant(imageAnnotation, (p) => {
        p.hypothesis.annotations[1].label = 'car';
      }),
      'request/body/hypothesis/annotations/1/label "car" is not one of geometries/polygon/objects_to_annotate',
    ],
    // NER.
    [
      'NER label name twice in the tree',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.labels[2].children[1].name = 'ORG';
      }),
      'request/body/labels/2/children/1/name "ORG" is used twice (first at labels/1/name)',
    ],
    [
      'NER option value twice',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.labels[0].attributes.role.options[1].value = 'executive';
      }),
      'request/body/labels/0/attributes/role/options/1/value "executive" is used twice in this attribute',
    ],
    [
      'NER unknown target label',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.relationships[0].target_label = 'COMPANY';
      }),
      'request/body/relationships/0/target_label "COMPANY" is not a label of the task',
    ],
    [
      'NER unknown source label',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.relationships[1].source_label = 'THING';
      }),
      'request/body/relationships/1/source_label "THING" is not a label of the task',
    ],
    [
      'NER relationship name twice',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.relationships[1].name = 'works_for';
      }),
      'request/body/relationships/1/name "works_for" is used twice (first at relationships/0/name)',
    ],
    // Document transcription.
    [
      'feature name twice',
      'documenttranscription',
      variant(documentTranscription, (p) => {
        p.features[1].name = 'invoice_number';
      }),
      'request/body/features/1/name "invoice_number" is used twice',
    ],
    [
      'pre-label naming no feature',
      'documenttranscription',
      variant(documentTranscription, (p) => {
        p.hypothesis.annotations[0].label = 'total';
      }),
      'request/body/hypothesis/annotations/0/label "total" is not the label of one of the features',
    ],
    [
      'pre-label without features',
      'documenttranscription',
      variant(documentTranscription, (p) => {
        delete p.features;
      }),
      'request/body/hypothesis/annotations/0/label "invoice_number" names a feature, but the task has no features',
    ],
  ])('%s', (_name, type, params, message) => {
    expect(checkTaskParams(type, params)).toContain(message);
  });

  const tc = (change: (p: any) => void) => variant(textCollection, change);
  const forms = (change: (p: any) => void) => variant(formCollection, change);
  it.each<[string, Params, string]>([
    // Unique field_ids, at every depth.
    [
      'field_id twice at the top level',
      tc((p) => {
        p.fields[4].field_id = 'quality';
      }),
      'request/body/fields/4/field_id "quality" is used twice (first at fields/3/field_id)',
    ],
    [
      'field_id of a form child equal to a form',
      forms((p) => {
        p.fields[1].fields[0].field_id = 'product';
      }),
      'request/body/fields/1/fields/0/field_id "product" is used twice (first at fields/0/field_id)',
    ],
    [
      'field_id inside a FieldSet used twice',
      forms((p) => {
        p.fields[0].fields[1].fields[1].field_id = 'name';
      }),
      'request/body/fields/0/fields/1/fields/1/field_id "name" is used twice (first at fields/0/fields/0/field_id)',
    ],
    // Forms: all top-level fields or none.
    [
      'a form among other fields',
      forms((p) => {
        p.fields.push({ type: 'text', field_id: 'loose', title: 'Loose' });
      }),
      'request/body/fields must be either all form fields or no form fields',
    ],
    // Responses bounds.
    [
      'max_responses_required below min',
      tc((p) => {
        p.fields[1].min_responses_required = 4;
      }),
      'request/body/fields/1/max_responses_required must be at least min_responses_required (4)',
    ],
    [
      'min_responses_required above the default max',
      tc((p) => {
        p.fields[3].min_responses_required = 2;
      }),
      'request/body/fields/3/max_responses_required (absent, so 1) must be at least min_responses_required (2)',
    ],
    [
      'responses bounds of a form child',
      forms((p) => {
        p.fields[0].fields[1].fields[0].min_responses_required = 2;
      }),
      'request/body/fields/0/fields/1/fields/0/max_responses_required (absent, so 1) must be at least min_responses_required (2)',
    ],
    // Number min/max, category choices, time range, ranking.
    [
      'number min above max',
      tc((p) => {
        p.fields[3].min = 6;
      }),
      'request/body/fields/3/min (6) must not be above max (5)',
    ],
    [
      'category max_choices below min_choices',
      tc((p) => {
        p.fields[4].min_choices = 3;
      }),
      'request/body/fields/4/max_choices must be at least min_choices (3)',
    ],
    [
      'category choice value twice, nested',
      tc((p) => {
        p.fields[4].choices[0].subchoices[1].value = 'news';
      }),
      'request/body/fields/4/choices/1/value "news" is used twice in this field (first at fields/4/choices/0/subchoices/1/value)',
    ],
    [
      'time range from above to',
      tc((p) => {
        p.fields[1].default_seconds = [40, 30];
      }),
      'request/body/fields/1/default_seconds [40, 30]: from must not be above to',
    ],
    [
      'time range, other spelling, from above to',
      tc((p) => {
        p.fields[2].defaults_seconds = [11, 10];
      }),
      'request/body/fields/2/defaults_seconds [11, 10]: from must not be above to',
    ],
    [
      'num_items_to_rank above the attachments',
      tc((p) => {
        p.fields[8].num_items_to_rank = 4;
      }),
      'request/body/fields/8/num_items_to_rank (4) must not exceed the number of attachments (3)',
    ],
    // Fields naming fields.
    [
      'default_from_field naming no field',
      tc((p) => {
        p.fields[2].default_from_field = 'nothing';
      }),
      'request/body/fields/2/default_from_field "nothing" is not the field_id of another time_range field',
    ],
    [
      'default_from_field naming a field of another type',
      tc((p) => {
        p.fields[2].default_from_field = 'quality';
      }),
      'request/body/fields/2/default_from_field "quality" is not the field_id of another time_range field',
    ],
    [
      'default_from_field naming itself',
      tc((p) => {
        p.fields[2].default_from_field = 'second_segment';
      }),
      'request/body/fields/2/default_from_field "second_segment" is not',
    ],
    [
      'choices_from_field naming no field',
      tc((p) => {
        p.fields[7].choices_from_field = 'nothing';
      }),
      'request/body/fields/7/choices_from_field "nothing" is not the field_id of another field',
    ],
    [
      'choices_from_field naming itself',
      tc((p) => {
        p.fields[7].choices_from_field = 'sponsor';
      }),
      'request/body/fields/7/choices_from_field "sponsor" is not the field_id of another field',
    ],
    [
      'condition key naming no field',
      tc((p) => {
        p.fields[5].conditions[0].nothing = 'x';
      }),
      'request/body/fields/5/conditions/0/nothing names no field of the task',
    ],
    [
      'condition key naming a text field',
      tc((p) => {
        p.fields[1].conditions.push({ summary: 'x' });
      }),
      'request/body/fields/1/conditions/1/summary names a text field; condition keys must be field_ids of category fields',
    ],
    [
      'attachment forms naming no form',
      forms((p) => {
        p.attachments[1].forms = ['product', 'name'];
      }),
      'request/body/attachments/1/forms/1 "name" is not the field_id of a form field',
    ],
    [
      'attachment forms without forms',
      tc((p) => {
        p.attachments[0].forms = ['summary'];
      }),
      'request/body/attachments/0/forms/0 "summary" is not the field_id of a form field',
    ],
    // The hypothesis fits the fields.
    [
      'hypothesis key and field_id differ',
      tc((p) => {
        p.hypothesis.annotations.summary.field_id = 'quality';
      }),
      'request/body/hypothesis/annotations/summary/field_id "quality" must equal its key "summary"',
    ],
    [
      'hypothesis of no field',
      tc((p) => {
        p.hypothesis.annotations.nothing = { type: 'text', field_id: 'nothing', response: ['x'] };
      }),
      'request/body/hypothesis/annotations/nothing/field_id "nothing" is not a field of the task',
    ],
    [
      'hypothesis of the wrong type',
      tc((p) => {
        p.hypothesis.annotations.summary.type = 'boolean';
        p.hypothesis.annotations.summary.response = [true];
      }),
      'request/body/hypothesis/annotations/summary/type "boolean" is not the type of field "summary" (text)',
    ],
    [
      'hypothesis with too many answers',
      tc((p) => {
        p.hypothesis.annotations.quality.response = ['1', '2'];
      }),
      'request/body/hypothesis/annotations/quality/response has 2 answers; field "quality" takes at most max_responses_required (1)',
    ],
    [
      'hypothesis text too long',
      tc((p) => {
        p.hypothesis.annotations.summary.response = ['x'.repeat(21)];
      }),
      'request/body/hypothesis/annotations/summary/response/0 has 21 characters',
    ],
    [
      'hypothesis number below min',
      tc((p) => {
        p.hypothesis.annotations.quality.response = ['0.5'];
      }),
      'request/body/hypothesis/annotations/quality/response/0 "0.5" is below the min (1)',
    ],
    [
      'hypothesis number above max',
      tc((p) => {
        p.hypothesis.annotations.quality.response = ['7'];
      }),
      'request/body/hypothesis/annotations/quality/response/0 "7" is above the max (5)',
    ],
    [
      'hypothesis datetime part not included',
      tc((p) => {
        p.hypothesis.annotations.recorded.response = [{ year: 2026, day: 3 }];
      }),
      'request/body/hypothesis/annotations/recorded/response/0/day is not one of the parts',
    ],
    [
      'hypothesis category value not a choice',
      tc((p) => {
        p.hypothesis.annotations.topic.response = [['cooking']];
      }),
      'request/body/hypothesis/annotations/topic/response/0/0 "cooking" is not a selectable choice value',
    ],
    [
      'hypothesis category value of a navigation choice',
      tc((p) => {
        p.hypothesis.annotations.topic.response = [['sports']];
      }),
      'request/body/hypothesis/annotations/topic/response/0/0 "sports" is not a selectable choice value',
    ],
    [
      'hypothesis category value of the other JSON type',
      tc((p) => {
        p.fields[0].choices.pop();
        p.hypothesis.annotations.contains_ads.response = [['3']];
      }),
      'request/body/hypothesis/annotations/contains_ads/response/0/0 "3" is not a selectable choice value',
    ],
    [
      'hypothesis category value selected twice',
      tc((p) => {
        p.hypothesis.annotations.topic.response = [['news', 'news']];
      }),
      'request/body/hypothesis/annotations/topic/response/0/1 "news" is selected twice',
    ],
    [
      'hypothesis category with too many choices',
      tc((p) => {
        p.hypothesis.annotations.contains_ads.response = [['yes', 'no']];
      }),
      'request/body/hypothesis/annotations/contains_ads/response/0 selects 2 choices; field "contains_ads" takes 1',
    ],
    [
      'hypothesis time range from above to',
      tc((p) => {
        p.hypothesis.annotations.ad_segment.response[1] = { from_seconds: 9, to_seconds: 8 };
      }),
      'request/body/hypothesis/annotations/ad_segment/response/1/from_seconds (9) must not be above to_seconds (8)',
    ],
    [
      'hypothesis select option not a choice',
      tc((p) => {
        p.hypothesis.annotations.language.response = [['2']];
      }),
      'request/body/hypothesis/annotations/language/response/0/0 "2" is not one of the choices',
    ],
    [
      'hypothesis ranking index out of range',
      tc((p) => {
        p.hypothesis.annotations.rank.response = [[0, 3]];
      }),
      'request/body/hypothesis/annotations/rank/response/0/1 (3) is not the index of one of the 3 attachments',
    ],
    [
      'hypothesis ranking index twice',
      tc((p) => {
        p.hypothesis.annotations.rank.response = [[1, 1]];
      }),
      'request/body/hypothesis/annotations/rank/response/0/1 (1) is ranked twice',
    ],
    [
      'hypothesis ranking more than num_items_to_rank',
      tc((p) => {
        p.fields[8].num_items_to_rank = 2;
      }),
      'request/body/hypothesis/annotations/rank/response/0 ranks 3 attachments; field "rank" ranks at most 2',
    ],
    [
      'hypothesis of a form child at the top level',
      forms((p) => {
        p.hypothesis.annotations.name = { type: 'text', field_id: 'name', response: ['x'] };
      }),
      'request/body/hypothesis/annotations/name/field_id "name" is not a field of the task (top level)',
    ],
    [
      "hypothesis form answer naming another form's child",
      forms((p) => {
        p.hypothesis.annotations.product.response[1].shop_name = { type: 'text', field_id: 'shop_name', response: ['x'] };
      }),
      'request/body/hypothesis/annotations/product/response/1/shop_name/field_id "shop_name" is not a field of form "product"',
    ],
    [
      'hypothesis form child answer not fitting',
      forms((p) => {
        p.hypothesis.annotations.product.response[0].price.response = ['-1'];
      }),
      'request/body/hypothesis/annotations/product/response/0/price/response/0 "-1" is below the min (0)',
    ],
    [
      'hypothesis form with too many answers',
      forms((p) => {
        p.hypothesis.annotations.product.response.push({});
      }),
      'request/body/hypothesis/annotations/product/response has 3 answers',
    ],
  ])('textcollection: %s', (_name, params, message) => {
    expect(checkTaskParams('textcollection', params)).toContain(message);
  });
});
