// The answer rules a worker's textcollection answer meets (shared/answer-rules.ts): a field
// left out is fine unless it is `required` (UnitFieldCommon.required, default false); a field that
// is answered is checked however it is marked.
import { describe, expect, it } from 'vitest';
import { checkAnswer } from '../../shared/answer-rules.ts';

const params = {
  attachments: [{ type: 'text', content: 'A podcast episode transcript.' }],
  fields: [
    { type: 'text', field_id: 'summary', title: 'Summary', required: true },
    { type: 'boolean', field_id: 'has_ads', title: 'Does it contain ads?' },
    { type: 'text', field_id: 'notes', title: 'Notes', required: 'false', max_characters: 10 },
  ],
};
const check = (annotations: Record<string, unknown>) => checkAnswer({ type: 'textcollection', params }, { annotations });

describe('textcollection answers: required and optional fields', () => {
  it('accepts an answer that leaves the optional fields out', () => {
    expect(check({ summary: 'About cooking.' })).toEqual([]);
  });

  it('refuses an answer without a required field, naming it', () => {
    expect(check({ has_ads: true })).toEqual([expect.stringMatching(/annotations\.summary is missing: the field is required/)]);
  });

  it('checks an optional field that is answered', () => {
    expect(check({ summary: 'About cooking.', notes: 'far too long for ten characters' })).toEqual([
      expect.stringMatching(/annotations\.notes/),
    ]);
  });
});
