// Seed 4.2 and the contract's parameter descriptions: the rules that relate one parameter to
// another (bounds, uniqueness across a tree, one field naming another), which JSON Schema cannot
// state, so that the shape checks and the generated invalid requests never reach them. Each case
// sends a request that keeps the rule exactly at its edge (200) and the same request breaking it
// (400 whose message names the field, and no task stored).
import { loadContract } from '../contract.ts';
import { expectThat, type Check, type CheckContext } from '../types.ts';
import { SINK, expectError, idsOf, listTasks, postTask } from './helpers.ts';

const area = 'Parameter rules';
const IMAGE = 'https://example.com/conformance/street.jpg';

interface Case {
  /** What the broken request breaks, for messages. */
  what: string;
  valid: Record<string, unknown>;
  invalid: Record<string, unknown>;
  /** What the 400's message must contain (the contract: "a validation message names the offending field"): one text, or each of several. */
  names: string | string[];
}

const image = (extra: Record<string, unknown>) => ({
  callback_url: SINK,
  instruction: 'Mark the objects.',
  attachment: IMAGE,
  attachment_type: 'image',
  ...extra,
});

async function runCases(ctx: CheckContext, type: string, cases: Case[]) {
  const tag = ctx.unique('rules');
  for (const c of cases) {
    const ok = await postTask(ctx, type, c.valid);
    expectThat(
      ok.status === 200,
      `${type}: the request at the edge of the rule (${c.what}, not broken) should get 200, got ${ok.status}: ${ok.text.slice(0, 400)}`,
    );
    const bad = await postTask(ctx, type, { ...c.invalid, tags: [tag] });
    expectError(bad, 400, `${type}: ${c.what}`);
    const names = typeof c.names === 'string' ? [c.names] : c.names;
    expectThat(
      typeof bad.body?.error === 'string' && names.every((n) => bad.body.error.includes(n)),
      `${type}: the 400 for ${c.what} should name ${names.map((n) => JSON.stringify(n)).join(' and ')}, got ${JSON.stringify(bad.body?.error)}`,
    );
  }
  const stored = idsOf((await listTasks(ctx, { tags: tag })).docs);
  expectThat(stored.length === 0, `${type}: refused requests should store no task, found ${stored.length}`, stored);
}

function ruleCheck(type: string, seed: string, rule: string, cases: () => Case[]): Check {
  // The generations whose contract has the type (the older one lacks the newer types).
  const generations = (['current', 'legacy'] as const).filter((gen) =>
    loadContract(gen).operations.some((op) => op.method === 'post' && op.path === `/v1/task/${type}`),
  );
  return { id: `param-rules/${type}`, area, seed, rule, kind: 'behaviour', generations, run: (ctx) => runCases(ctx, type, cases()) };
}

const textField = (id: string, extra: Record<string, unknown> = {}) => ({ type: 'text', field_id: id, title: `Field ${id}`, ...extra });
const categoryField = (id: string, extra: Record<string, unknown> = {}) => ({
  type: 'category',
  field_id: id,
  title: `Field ${id}`,
  choices: [
    { label: 'Yes', value: 'yes' },
    { label: 'No', value: 'no' },
  ],
  ...extra,
});
const textCollection = (fields: unknown[], extra: Record<string, unknown> = {}) => ({
  callback_url: SINK,
  instruction: 'Fill in the form.',
  attachments: [
    { type: 'text', content: 'First text.' },
    { type: 'text', content: 'Second text.' },
  ],
  fields,
  ...extra,
});
const hypothesis = (annotations: Record<string, unknown>) => ({ hypothesis: { annotations } });
const answer = (type: string, id: string, response: unknown[]) => ({ type, field_id: id, response });

const nerLabels = [
  { name: 'PERSON', display_name: 'Person' },
  { name: 'PLACE', display_name: 'Place', children: [{ name: 'CITY', display_name: 'City' }] },
];
const ner = (extra: Record<string, unknown>) => ({
  callback_url: SINK,
  instruction: 'Label the entities.',
  text: 'Jane Doe lives in Berlin.',
  labels: nerLabels,
  ...extra,
});
const documentTask = (extra: Record<string, unknown>) => ({
  callback_url: SINK,
  instruction: 'Transcribe the fields.',
  attachment: 'https://example.com/conformance/invoice.pdf',
  attachment_type: 'pdf',
  ...extra,
});

export const paramRuleChecks: Check[] = [
  ruleCheck(
    'lineannotation',
    '4.2 lineannotation (min_vertices, max_vertices)',
    'max_vertices must be at least min_vertices (equal is fine).',
    () => [
      {
        what: 'max_vertices below min_vertices',
        valid: image({ objects_to_annotate: ['lane'], min_vertices: 4, max_vertices: 4 }),
        invalid: image({ objects_to_annotate: ['lane'], min_vertices: 4, max_vertices: 3 }),
        names: 'max_vertices',
      },
    ],
  ),
  ruleCheck(
    'polygonannotation',
    '4.2 polygonannotation (min_vertices, max_vertices); annotation_attributes (offset only within a box)',
    'max_vertices must be at least min_vertices (equal is fine); an offset attribute is for box annotations only.',
    () => [
      {
        what: 'max_vertices below min_vertices',
        valid: image({ objects_to_annotate: ['lawn'], min_vertices: 5, max_vertices: 5 }),
        invalid: image({ objects_to_annotate: ['lawn'], min_vertices: 5, max_vertices: 4 }),
        names: 'max_vertices',
      },
      {
        what: 'an offset attribute on a polygon task',
        valid: image({ objects_to_annotate: ['lawn'], annotation_attributes: { width: { type: 'number', description: 'How wide?' } } }),
        invalid: image({ objects_to_annotate: ['lawn'], annotation_attributes: { width: { type: 'offset', description: 'How wide?' } } }),
        names: 'annotation_attributes',
      },
    ],
  ),
  ruleCheck(
    'pointannotation',
    '4.2 pointannotation (annotation_attributes: offset only within a box)',
    'An offset attribute is for box annotations only; the message names the attribute and the task type.',
    () => [
      {
        what: 'an offset attribute on a point task',
        valid: image({ objects_to_annotate: ['pole'], annotation_attributes: { height: { type: 'number', description: 'How high?' } } }),
        invalid: image({ objects_to_annotate: ['pole'], annotation_attributes: { height: { type: 'offset', description: 'How high?' } } }),
        names: ['annotation_attributes', 'pointannotation'],
      },
    ],
  ),
  ruleCheck(
    'segmentannotation',
    '4.2 segmentannotation (labels, instance_labels)',
    'A label is in labels or in instance_labels, not both.',
    () => [
      {
        what: 'a label in both labels and instance_labels',
        valid: image({ labels: ['road', 'sky'], instance_labels: ['car'] }),
        invalid: image({ labels: ['road', 'sky'], instance_labels: ['car', 'sky'] }),
        names: 'instance_labels',
      },
    ],
  ),
  ruleCheck(
    'categorization',
    '4.2 categorization (category_ids)',
    'Each category_ids value is one of categories, and no two ids name the same category.',
    () => {
      const base = {
        callback_url: SINK,
        instruction: 'Route it.',
        attachment_type: 'text',
        attachment: 'A ticket.',
        categories: ['billing', 'support'],
      };
      return [
        {
          what: 'a category_ids value that is no category',
          valid: { ...base, category_ids: { b: 'billing' } },
          invalid: { ...base, category_ids: { b: 'billing', x: 'sales' } },
          names: 'category_ids',
        },
        {
          what: 'two ids naming one category',
          valid: { ...base, category_ids: { b: 'billing', s: 'support' } },
          invalid: { ...base, category_ids: { b: 'billing', s: 'billing' } },
          names: 'category_ids',
        },
      ];
    },
  ),
  ruleCheck(
    'imageannotation',
    '4.2 imageannotation (geometries: min_vertices, max_vertices; hypothesis)',
    "A geometry's max_vertices is at least its min_vertices; a pre-label's type is one of the task's geometries and its label one of that geometry's objects.",
    () => {
      const geometries = {
        box: { objects_to_annotate: ['car'] },
        polygon: { objects_to_annotate: ['lawn'], min_vertices: 3, max_vertices: 3 },
      };
      const box = { uuid: '6f1c2b7e-1d1a-4a55-9f4e-3c2b1a0d9e8f', type: 'box', label: 'car', left: 10, top: 10, width: 50, height: 40 };
      const second = '7a2d3c8f-2e2b-4b66-8a5f-4d3c2b1e0f9a';
      return [
        {
          what: 'a geometry with max_vertices below min_vertices',
          valid: image({ geometries }),
          invalid: image({ geometries: { ...geometries, polygon: { objects_to_annotate: ['lawn'], min_vertices: 3, max_vertices: 2 } } }),
          names: 'max_vertices',
        },
        {
          what: 'a pre-label of a geometry the task does not have',
          valid: image({ geometries, hypothesis: { annotations: [box] } }),
          invalid: image({ geometries: { polygon: geometries.polygon }, hypothesis: { annotations: [box] } }),
          names: 'hypothesis',
        },
        {
          what: "a pre-label whose label is not one of its geometry's objects",
          valid: image({ geometries, hypothesis: { annotations: [box] } }),
          invalid: image({ geometries, hypothesis: { annotations: [{ ...box, label: 'lawn' }] } }),
          names: 'hypothesis',
        },
        {
          what: 'the second pre-label broken (the message names which)',
          valid: image({ geometries, hypothesis: { annotations: [box, { ...box, uuid: second }] } }),
          invalid: image({ geometries, hypothesis: { annotations: [box, { ...box, uuid: second, label: 'lawn' }] } }),
          names: 'hypothesis/annotations/1',
        },
      ];
    },
  ),
  ruleCheck(
    'videoplaybackannotation',
    '4.2 videoplaybackannotation (geometries: min_vertices, max_vertices)',
    "A geometry's max_vertices is at least its min_vertices.",
    () => {
      const video = (polygon: Record<string, unknown>) => ({
        callback_url: SINK,
        instruction: 'Track the objects.',
        attachment: 'https://example.com/conformance/drive.mp4',
        attachment_type: 'video',
        geometries: { polygon: { objects_to_annotate: ['lawn'], ...polygon } },
      });
      return [
        {
          what: 'a geometry with max_vertices below min_vertices',
          valid: video({ min_vertices: 4, max_vertices: 4 }),
          invalid: video({ min_vertices: 4, max_vertices: 3 }),
          names: 'max_vertices',
        },
      ];
    },
  ),
  ruleCheck(
    'namedentityrecognition',
    '4.2 namedentityrecognition (labels, relationships)',
    'Label names are unique across the label tree, option values within an attribute; relationship ends name labels of the task; relationship names are unique.',
    () => {
      const role = (values: string[]) => ({
        role: { type: 'select', display_name: 'Role', options: values.map((value) => ({ value, display_name: value })) },
      });
      return [
        {
          what: 'a child label with the name of another label',
          valid: ner({}),
          invalid: ner({ labels: [nerLabels[0], { ...nerLabels[1], children: [{ name: 'PERSON', display_name: 'Again' }] }] }),
          names: 'labels',
        },
        {
          what: 'an attribute option value used twice',
          valid: ner({ labels: [{ ...nerLabels[0], attributes: role(['boss', 'staff']) }, nerLabels[1]] }),
          invalid: ner({ labels: [{ ...nerLabels[0], attributes: role(['boss', 'boss']) }, nerLabels[1]] }),
          names: 'options',
        },
        {
          what: 'a relationship whose target_label is no label of the task',
          valid: ner({ relationships: [{ name: 'lives_in', source_label: 'PERSON', target_label: 'CITY' }] }),
          invalid: ner({ relationships: [{ name: 'lives_in', source_label: 'PERSON', target_label: 'COUNTRY' }] }),
          names: 'target_label',
        },
        {
          what: 'a relationship whose source_label is no label of the task',
          valid: ner({ relationships: [{ name: 'lives_in', source_label: 'PERSON', target_label: 'PLACE' }] }),
          invalid: ner({ relationships: [{ name: 'lives_in', source_label: 'ANIMAL', target_label: 'PLACE' }] }),
          names: 'source_label',
        },
        {
          what: 'two relationships with one name',
          valid: ner({ relationships: [{ name: 'lives_in' }, { name: 'born_in' }] }),
          invalid: ner({ relationships: [{ name: 'lives_in' }, { name: 'lives_in' }] }),
          names: 'relationships',
        },
      ];
    },
  ),
  ruleCheck(
    'documenttranscription',
    '4.2 documenttranscription (features, hypothesis)',
    'Feature names are unique; a pre-label names one of the features.',
    () => {
      const features = [{ name: 'invoice_number' }, { name: 'total' }];
      const annotation = (label: string) => ({ label, text: '1041', type: 'line', left: 10, top: 10, width: 100, height: 20, page: 1 });
      return [
        {
          what: 'a feature name used twice',
          valid: documentTask({ features }),
          invalid: documentTask({ features: [...features, { name: 'total' }] }),
          names: 'features',
        },
        {
          what: 'a pre-label naming no feature',
          valid: documentTask({ features, hypothesis: { annotations: [annotation('total')] } }),
          invalid: documentTask({ features, hypothesis: { annotations: [annotation('subtotal')] } }),
          names: 'hypothesis',
        },
      ];
    },
  ),
  ruleCheck(
    'textcollection',
    '4.2 textcollection (fields, attachments, hypothesis)',
    'field_ids are unique; maxima are at least their minima; number min not above max; a time range from not above to; num_items_to_rank at most the attachments; fields named by default_from_field, choices_from_field, conditions and attachment forms exist and have the right type; pre-filled answers fit their fields.',
    () => [
      {
        what: 'a field_id used twice',
        valid: textCollection([textField('a'), textField('b')]),
        invalid: textCollection([textField('a'), textField('a')]),
        names: 'field_id',
      },
      {
        what: 'max_responses_required below min_responses_required',
        valid: textCollection([textField('a', { min_responses_required: 2, max_responses_required: 2 })]),
        invalid: textCollection([textField('a', { min_responses_required: 2, max_responses_required: 1 })]),
        names: 'max_responses_required',
      },
      {
        what: 'max_choices below min_choices',
        valid: textCollection([categoryField('a', { min_choices: 2, max_choices: 2 })]),
        invalid: textCollection([categoryField('a', { min_choices: 2, max_choices: 1 })]),
        names: 'max_choices',
      },
      {
        what: 'a choice value used twice in a category field',
        valid: textCollection([
          categoryField('a', {
            choices: [
              { label: 'Yes', value: 'yes' },
              { label: 'Maybe', value: 'maybe', subchoices: [{ label: 'Rather yes', value: 'rather-yes' }] },
            ],
          }),
        ]),
        invalid: textCollection([
          categoryField('a', {
            choices: [
              { label: 'Yes', value: 'yes' },
              { label: 'Maybe', value: 'maybe', subchoices: [{ label: 'Yes again', value: 'yes' }] },
            ],
          }),
        ]),
        names: 'choices',
      },
      {
        what: 'a number field with min above max',
        valid: textCollection([{ type: 'number', field_id: 'n', title: 'How many?', min: 5, max: 5 }]),
        invalid: textCollection([{ type: 'number', field_id: 'n', title: 'How many?', min: 6, max: 5 }]),
        names: 'min',
      },
      {
        what: 'a time range default with from above to',
        valid: textCollection([{ type: 'time_range', field_id: 't', title: 'When?', default_seconds: [5, 5] }]),
        invalid: textCollection([{ type: 'time_range', field_id: 't', title: 'When?', default_seconds: [6, 5] }]),
        names: 'default_seconds',
      },
      {
        what: 'a time range default with from above to, in the other spelling (defaults_seconds)',
        valid: textCollection([{ type: 'time_range', field_id: 't', title: 'When?', defaults_seconds: [5, 5] }]),
        invalid: textCollection([{ type: 'time_range', field_id: 't', title: 'When?', defaults_seconds: [6, 5] }]),
        names: 'defaults_seconds',
      },
      {
        what: "a number field inside a form's fieldset with min above max",
        valid: textCollection([
          {
            type: 'form',
            field_id: 'f',
            title: 'Form',
            fields: [
              {
                type: 'fieldset',
                title: 'Counts',
                incline: true,
                fields: [{ type: 'number', field_id: 'n', title: 'How many?', min: 5, max: 5 }],
              },
            ],
          },
        ]),
        invalid: textCollection([
          {
            type: 'form',
            field_id: 'f',
            title: 'Form',
            fields: [
              {
                type: 'fieldset',
                title: 'Counts',
                incline: true,
                fields: [{ type: 'number', field_id: 'n', title: 'How many?', min: 6, max: 5 }],
              },
            ],
          },
        ]),
        names: 'fields/0/fields/0/fields/0',
      },
      {
        what: 'num_items_to_rank above the number of attachments',
        valid: textCollection([{ type: 'ranking_order', field_id: 'r', title: 'Rank them', num_items_to_rank: 2 }]),
        invalid: textCollection([{ type: 'ranking_order', field_id: 'r', title: 'Rank them', num_items_to_rank: 3 }]),
        names: 'num_items_to_rank',
      },
      {
        what: 'default_from_field naming a field that is no time range',
        valid: textCollection([
          { type: 'time_range', field_id: 't1', title: 'From', default_seconds: [0, 5] },
          { type: 'time_range', field_id: 't2', title: 'To', default_seconds: [0, 5], default_from_field: 't1' },
          textField('x'),
        ]),
        invalid: textCollection([
          { type: 'time_range', field_id: 't1', title: 'From', default_seconds: [0, 5] },
          { type: 'time_range', field_id: 't2', title: 'To', default_seconds: [0, 5], default_from_field: 'x' },
          textField('x'),
        ]),
        names: 'default_from_field',
      },
      {
        what: 'choices_from_field naming no field',
        valid: textCollection([textField('x'), { type: 'select', field_id: 's', title: 'Pick', choices_from_field: 'x' }]),
        invalid: textCollection([textField('x'), { type: 'select', field_id: 's', title: 'Pick', choices_from_field: 'nowhere' }]),
        names: 'choices_from_field',
      },
      {
        what: 'a condition on a field that is no category field',
        valid: textCollection([categoryField('c'), textField('x', { conditions: [{ c: ['yes'] }] })]),
        invalid: textCollection([categoryField('c'), textField('y'), textField('x', { conditions: [{ y: ['yes'] }] })]),
        names: 'conditions',
      },
      {
        what: 'a text answer longer than max_characters',
        valid: textCollection([textField('a', { max_characters: 5 })], hypothesis({ a: answer('text', 'a', ['12345']) })),
        invalid: textCollection([textField('a', { max_characters: 5 })], hypothesis({ a: answer('text', 'a', ['123456']) })),
        names: 'hypothesis',
      },
      {
        what: 'a number answer above max',
        valid: textCollection(
          [{ type: 'number', field_id: 'n', title: 'How many?', min: 1, max: 5 }],
          hypothesis({ n: answer('number', 'n', ['5']) }),
        ),
        invalid: textCollection(
          [{ type: 'number', field_id: 'n', title: 'How many?', min: 1, max: 5 }],
          hypothesis({ n: answer('number', 'n', ['6']) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'a number answer below min',
        valid: textCollection(
          [{ type: 'number', field_id: 'n', title: 'How many?', min: 1, max: 5 }],
          hypothesis({ n: answer('number', 'n', ['1']) }),
        ),
        invalid: textCollection(
          [{ type: 'number', field_id: 'n', title: 'How many?', min: 1, max: 5 }],
          hypothesis({ n: answer('number', 'n', ['0']) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'a category answer that is no choice',
        valid: textCollection([categoryField('c')], hypothesis({ c: answer('category', 'c', [['yes']]) })),
        invalid: textCollection([categoryField('c')], hypothesis({ c: answer('category', 'c', [['perhaps']]) })),
        names: 'hypothesis',
      },
      {
        what: 'a category answer with more choices than max_choices',
        valid: textCollection([categoryField('c', { max_choices: 2 })], hypothesis({ c: answer('category', 'c', [['yes', 'no']]) })),
        invalid: textCollection([categoryField('c')], hypothesis({ c: answer('category', 'c', [['yes', 'no']]) })),
        names: 'hypothesis',
      },
      {
        what: 'a category answer with fewer choices than min_choices (the message gives both bounds)',
        valid: textCollection(
          [
            categoryField('c', {
              choices: [
                { label: 'A', value: 'a' },
                { label: 'B', value: 'b' },
                { label: 'C', value: 'c' },
              ],
              min_choices: 2,
              max_choices: 3,
            }),
          ],
          hypothesis({ c: answer('category', 'c', [['a', 'b']]) }),
        ),
        invalid: textCollection(
          [
            categoryField('c', {
              choices: [
                { label: 'A', value: 'a' },
                { label: 'B', value: 'b' },
                { label: 'C', value: 'c' },
              ],
              min_choices: 2,
              max_choices: 3,
            }),
          ],
          hypothesis({ c: answer('category', 'c', [['a']]) }),
        ),
        names: ['hypothesis', '2', '3'],
      },
      {
        what: 'a category answer selecting one value twice',
        valid: textCollection([categoryField('c', { max_choices: 2 })], hypothesis({ c: answer('category', 'c', [['yes', 'no']]) })),
        invalid: textCollection([categoryField('c', { max_choices: 2 })], hypothesis({ c: answer('category', 'c', [['yes', 'yes']]) })),
        names: 'hypothesis',
      },
      {
        what: 'a datetime answer with a part its field does not include',
        valid: textCollection(
          [{ type: 'datetime', field_id: 'd', title: 'When?', include: ['year', 'month', 'day'] }],
          hypothesis({ d: answer('datetime', 'd', [{ year: 2026, month: 11, day: 21 }]) }),
        ),
        invalid: textCollection(
          [{ type: 'datetime', field_id: 'd', title: 'When?', include: ['year', 'month', 'day'] }],
          hypothesis({ d: answer('datetime', 'd', [{ year: 2026, month: 11, day: 21, hour: 9 }]) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'a time range answer with from above to',
        valid: textCollection(
          [{ type: 'time_range', field_id: 't', title: 'When?', default_seconds: [0, 5] }],
          hypothesis({ t: answer('time_range', 't', [{ from_seconds: 3, to_seconds: 3 }]) }),
        ),
        invalid: textCollection(
          [{ type: 'time_range', field_id: 't', title: 'When?', default_seconds: [0, 5] }],
          hypothesis({ t: answer('time_range', 't', [{ from_seconds: 4, to_seconds: 3 }]) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'a ranking answer naming an attachment that does not exist',
        valid: textCollection(
          [{ type: 'ranking_order', field_id: 'r', title: 'Rank them' }],
          hypothesis({ r: answer('ranking_order', 'r', [[1, 0]]) }),
        ),
        invalid: textCollection(
          [{ type: 'ranking_order', field_id: 'r', title: 'Rank them' }],
          hypothesis({ r: answer('ranking_order', 'r', [[2, 0]]) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'a select answer that is none of its choices',
        valid: textCollection(
          [{ type: 'select', field_id: 's', title: 'Pick', choices: ['a', 'b'] }],
          hypothesis({ s: answer('select', 's', [['b']]) }),
        ),
        invalid: textCollection(
          [{ type: 'select', field_id: 's', title: 'Pick', choices: ['a', 'b'] }],
          hypothesis({ s: answer('select', 's', [['c']]) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'a ranking answer ranking more than num_items_to_rank',
        valid: textCollection(
          [{ type: 'ranking_order', field_id: 'r', title: 'Rank the best', num_items_to_rank: 1 }],
          hypothesis({ r: answer('ranking_order', 'r', [[1]]) }),
        ),
        invalid: textCollection(
          [{ type: 'ranking_order', field_id: 'r', title: 'Rank the best', num_items_to_rank: 1 }],
          hypothesis({ r: answer('ranking_order', 'r', [[1, 0]]) }),
        ),
        names: 'hypothesis',
      },
      {
        what: 'more pre-filled answers than max_responses_required',
        valid: textCollection([textField('a', { max_responses_required: 2 })], hypothesis({ a: answer('text', 'a', ['x', 'y']) })),
        invalid: textCollection([textField('a', { max_responses_required: 2 })], hypothesis({ a: answer('text', 'a', ['x', 'y', 'z']) })),
        names: 'hypothesis',
      },
      {
        what: "an attachment's forms naming a field that is no form",
        valid: textCollection([{ type: 'form', field_id: 'f', title: 'Form', fields: [textField('a')] }], {
          attachments: [{ type: 'text', content: 'Shown with the form.', forms: ['f'] }],
        }),
        invalid: textCollection([{ type: 'form', field_id: 'f', title: 'Form', fields: [textField('a')] }], {
          attachments: [{ type: 'text', content: 'Shown with the form.', forms: ['a'] }],
        }),
        names: 'forms',
      },
      {
        what: 'a pre-annotation of the wrong type for its field',
        valid: textCollection([textField('a')], hypothesis({ a: answer('text', 'a', ['fine']) })),
        invalid: textCollection([textField('a')], hypothesis({ a: answer('number', 'a', ['3']) })),
        names: 'hypothesis',
      },
      {
        what: 'a pre-annotation of a field the task does not have',
        valid: textCollection([textField('a')], hypothesis({ a: answer('text', 'a', ['fine']) })),
        invalid: textCollection([textField('a')], hypothesis({ b: answer('text', 'b', ['fine']) })),
        names: 'hypothesis',
      },
    ],
  ),
];
