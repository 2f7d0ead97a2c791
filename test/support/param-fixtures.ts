// Task parameters for the parameter-rule tests (test/unit/server/param-rules.test.ts, and over HTTP in
// test/server/param-rules.test.ts): a valid task of each rule-heavy type, and `variant` to break one rule.
export type Params = Record<string, unknown>;

export const image = 'https://example.com/images/street-1041.jpg';

/** A valid text-collection task using every field type, a form-free variant. */
export const textCollection = (): Params => ({
  attachments: [
    { type: 'audio', content: 'https://example.com/a.mp3' },
    { type: 'image', content: 'https://example.com/b.jpg' },
    { type: 'text', content: 'c' },
  ],
  fields: [
    {
      type: 'category',
      field_id: 'contains_ads',
      title: 'Ads?',
      choices: [
        { label: 'Yes', value: 'yes' },
        { label: 'No', value: 'no' },
        { label: 'Three', value: 3 },
        { label: 'Three text', value: '3' },
      ],
    },
    {
      type: 'time_range',
      field_id: 'ad_segment',
      title: 'Where?',
      max_responses_required: 3,
      default_seconds: [0, 30],
      conditions: [{ contains_ads: 'yes' }],
    },
    { type: 'time_range', field_id: 'second_segment', title: 'Again', defaults_seconds: [10, 10], default_from_field: 'ad_segment' },
    { type: 'number', field_id: 'quality', title: 'Quality', use_slider: true, min: 1, max: 5, step: 0.5 },
    {
      type: 'category',
      field_id: 'topic',
      title: 'Topic',
      min_choices: 1,
      max_choices: 2,
      choices: [
        {
          label: 'Sports',
          value: 'sports',
          subchoices: [
            { label: 'Football', value: 'football' },
            { label: 'Tennis', value: 'tennis' },
          ],
        },
        { label: 'News', value: 'news' },
      ],
    },
    {
      type: 'text',
      field_id: 'summary',
      title: 'Summary',
      max_characters: 20,
      min_responses_required: 2,
      max_responses_required: 2,
      conditions: [{ contains_ads: 'yes', topic: { not: 'news' } }],
    },
    { type: 'select', field_id: 'language', title: 'Language', choices: ['English', 2] },
    { type: 'select', field_id: 'sponsor', title: 'Sponsor', choices_from_field: 'summary' },
    { type: 'ranking_order', field_id: 'rank', title: 'Rank', num_items_to_rank: 3 },
    { type: 'datetime', field_id: 'recorded', title: 'Recorded', include: ['year', 'month'] },
    { type: 'boolean', field_id: 'explicit', title: 'Explicit' },
  ],
  hypothesis: {
    annotations: {
      contains_ads: { type: 'category', field_id: 'contains_ads', response: [[3]] },
      ad_segment: {
        type: 'time_range',
        field_id: 'ad_segment',
        response: [
          { from_seconds: 1, to_seconds: 2 },
          { from_seconds: 5, to_seconds: 5 },
        ],
      },
      quality: { type: 'number', field_id: 'quality', response: ['4.5'] },
      topic: { type: 'category', field_id: 'topic', response: [['football', 'news']] },
      summary: { type: 'text', field_id: 'summary', response: ['short', 'also short'] },
      language: { type: 'select', field_id: 'language', response: [[2]] },
      sponsor: { type: 'select', field_id: 'sponsor', response: [['anything']] },
      rank: { type: 'ranking_order', field_id: 'rank', response: [[2, 0, 1]] },
      recorded: { type: 'datetime', field_id: 'recorded', response: [{ year: 2026, month: 11 }] },
      explicit: { type: 'boolean', field_id: 'explicit', response: [false] },
    },
  },
});

/** A valid text-collection task of forms (children inside a FieldSet too). */
export const formCollection = (): Params => ({
  attachments: [
    { type: 'text', content: 'a', forms: ['product'] },
    { type: 'text', content: 'b' },
  ],
  fields: [
    {
      type: 'form',
      field_id: 'product',
      title: 'Product',
      max_responses_required: 2,
      fields: [
        { type: 'text', field_id: 'name', title: 'Name' },
        {
          type: 'fieldset',
          incline: true,
          fields: [
            { type: 'number', field_id: 'price', title: 'Price', min: 0 },
            { type: 'category', field_id: 'currency', title: 'Currency', choices: [{ label: 'EUR', value: 'eur' }] },
          ],
        },
      ],
    },
    {
      type: 'form',
      field_id: 'shop',
      title: 'Shop',
      fields: [{ type: 'text', field_id: 'shop_name', title: 'Shop name', conditions: [{ currency: 'eur' }] }],
    },
  ],
  hypothesis: {
    annotations: {
      product: {
        type: 'form',
        field_id: 'product',
        response: [
          { name: { type: 'text', field_id: 'name', response: ['Pen'] }, price: { type: 'number', field_id: 'price', response: ['2'] } },
          { currency: { type: 'category', field_id: 'currency', response: [['eur']] } },
        ],
      },
    },
  },
});

export const ner = (): Params => ({
  text: 'Acme Corp hired Jane Doe as CFO in Berlin.',
  labels: [
    { name: 'PERSON', attributes: { role: { options: [{ value: 'executive' }, { value: 'employee' }] } } },
    { name: 'ORG' },
    { name: 'LOCATION', children: [{ name: 'CITY' }, { name: 'COUNTRY', attributes: { kind: { options: [{ value: 'executive' }] } } }] },
  ],
  relationships: [
    { name: 'works_for', is_directed: true, source_label: 'PERSON', target_label: 'ORG' },
    { name: 'located_in', source_label: 'ORG', target_label: 'CITY' },
  ],
});

export const imageAnnotation = (): Params => ({
  attachment: image,
  geometries: {
    box: { objects_to_annotate: ['car'] },
    polygon: { objects_to_annotate: ['sidewalk'], min_vertices: 3, max_vertices: 3 },
    line: { objects_to_annotate: ['lane'], max_vertices: 4 },
  },
  hypothesis: {
    annotations: [
      { uuid: '3f1c2b9e-6a0d-4c55-9a3e-1b2c3d4e5f60', type: 'box', label: 'car', left: 1, top: 1, width: 2, height: 2 },
      {
        uuid: '7a4e1f20-3b5c-4d6e-8f90-a1b2c3d4e5f6',
        type: 'polygon',
        label: 'sidewalk',
        vertices: [
          { x: 0, y: 0 },
          { x: 1, y: 0 },
          { x: 1, y: 1 },
        ],
      },
    ],
  },
});

export const documentTranscription = (): Params => ({
  attachment: 'https://example.com/docs/a.pdf',
  features: [{ name: 'invoice_number' }, { name: 'address' }],
  hypothesis: {
    annotations: [
      { type: 'line', label: 'invoice_number', text: 'INV-1', page: 1, left: 0, top: 0, width: 1, height: 1 },
      { type: 'word', text: 'x', page: 1, left: 0, top: 0, width: 1, height: 1 },
    ],
  },
});

/** Deep copy, then a change. */
export function variant(base: () => Params, change: (p: any) => void): Params {
  const p = structuredClone(base());
  change(p);
  return p;
}
