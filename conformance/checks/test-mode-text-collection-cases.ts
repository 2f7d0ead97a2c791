// Creation bodies for the test-mode response of a `textcollection` task (contract, "Test-mode
// responses", bullet **Text collection**): valid bodies that, together, exercise every rule of the
// bullet. The checker that re-derives the rules from a response is test-mode-text-collection.ts.
// Written from the contract; nothing here comes from the server's code.
import { SINK } from './helpers.ts';

const image = (name: string) => ({ type: 'image', content: `https://example.com/conformance/text-collection/${name}.jpg` });

/**
 * Valid `textcollection` creation bodies that, together, exercise every rule of the bullet: every
 * field type, several answers per field, conditions of every form (value, list, `not`, OR of
 * sets, AND of keys, on a later field, never holding, in a cycle), grids with decimal steps,
 * dates whose preset day the preset month lacks, selects fed by other fields, rankings, forms.
 */
export function textCollectionCases(): Record<string, unknown>[] {
  const flat = {
    callback_url: SINK,
    instruction: 'Listen to the episode, look at the cover art and fill in the form.',
    title: 'Podcast episode review',
    attachments: [
      { type: 'audio', content: 'https://example.com/conformance/text-collection/episode.mp3' },
      { type: 'markdown', content: '**Show notes.** The hosts review the final.' },
      image('cover'),
      { type: 'text', content: 'Transcript excerpt: welcome back to the show.' },
    ],
    fields: [
      {
        type: 'category',
        field_id: 'contains_ads',
        title: 'Advertisement?',
        required: true,
        choices: [
          { label: 'Yes', value: 'yes' },
          { label: 'No', value: 'no' },
        ],
      },
      // AND of two keys, one of them a `not`, on a field declared after this one (topic).
      {
        type: 'text',
        field_id: 'sponsor_name',
        title: 'Sponsor',
        max_characters: 12,
        conditions: [{ contains_ads: 'yes', topic: { not: 'news' } }],
      },
      // A single value; several answers.
      {
        type: 'time_range',
        field_id: 'ad_segment',
        title: 'Advertisement',
        default_seconds: [10, 40],
        increment_seconds: 5,
        min_responses_required: 2,
        max_responses_required: 4,
        conditions: [{ contains_ads: 'yes' }],
      },
      { type: 'number', field_id: 'audio_quality', title: 'Audio quality', use_slider: true, min: 1, max: 5, step: 0.25 },
      {
        type: 'number',
        field_id: 'odd_grid',
        title: 'Coarse grid',
        min: 0.5,
        max: 9,
        step: 2.5,
        min_responses_required: 2,
        max_responses_required: 3,
      },
      { type: 'number', field_id: 'loudness', title: 'Loudness (only a max)', max: 3, step: 0.75 },
      { type: 'number', field_id: 'free_number', title: 'Any number', min_responses_required: 2, max_responses_required: 3 },
      {
        type: 'category',
        field_id: 'topic',
        title: 'Topics',
        min_choices: 2,
        max_choices: 3,
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
          {
            label: 'Music',
            value: 'music',
            subchoices: [
              { label: 'Rock', value: 'rock' },
              {
                label: 'Jazz',
                value: 'jazz',
                subchoices: [
                  { label: 'Bebop', value: 'bebop' },
                  { label: 'Swing', value: 7 },
                ],
              },
            ],
          },
          { label: 'Other', value: 'other' },
        ],
      },
      { type: 'boolean', field_id: 'explicit', title: 'Explicit language', min_responses_required: 2, max_responses_required: 2 },
      { type: 'boolean', field_id: 'rerun', title: 'A rerun?' },
      // Real date: 31 February 2024 cannot be kept, the day becomes the 29th.
      {
        type: 'datetime',
        field_id: 'recorded_on',
        title: 'Recorded on',
        include: ['year', 'month', 'day'],
        defaults: { year: 2024, month: 2, day: 31 },
      },
      {
        type: 'datetime',
        field_id: 'recorded_at',
        title: 'Recorded at',
        include: ['hour', 'minute'],
        defaults: { hour: '7', year: 1999 },
        max_responses_required: 2,
      },
      { type: 'datetime', field_id: 'aired', title: 'Aired', include: ['year', 'month', 'day', 'hour', 'minute'] },
      {
        type: 'select',
        field_id: 'language',
        title: 'Language',
        choices: ['English', 'German', 3],
        min_responses_required: 2,
        max_responses_required: 2,
      },
      { type: 'select', field_id: 'main_topic', title: 'Main topic (from the topics)', choices_from_field: 'topic' },
      { type: 'ranking_order', field_id: 'best_two', title: 'Best two items', num_items_to_rank: 2 },
      {
        type: 'ranking_order',
        field_id: 'full_rank',
        title: 'Rank everything',
        first_label: 'Most useful',
        last_label: 'Least useful',
        max_responses_required: 2,
      },
      { type: 'text', field_id: 'summary', title: 'Summary', max_characters: 5, min_responses_required: 2, max_responses_required: 3 },
      // A chain: a field shown by a field that may itself be hidden (then nothing is selected in it).
      {
        type: 'category',
        field_id: 'sponsor_kind',
        title: 'Sponsor kind',
        conditions: [{ contains_ads: 'yes' }],
        choices: [
          { label: 'Online', value: 'online' },
          { label: 'Local', value: 'local' },
        ],
      },
      { type: 'text', field_id: 'sponsor_url', title: 'Sponsor URL', conditions: [{ sponsor_kind: 'online' }] },
      { type: 'boolean', field_id: 'not_online', title: 'Not an online sponsor', conditions: [{ sponsor_kind: { not: 'online' } }] },
      // OR of two condition sets, the second one a list of values.
      { type: 'text', field_id: 'no_ads_or_music', title: 'Why?', conditions: [{ contains_ads: 'no' }, { topic: ['rock', 'bebop', 7] }] },
      // Never holds: `sports` has subchoices, so it is never selected.
      { type: 'text', field_id: 'never_shown', title: 'Never shown', conditions: [{ topic: 'sports' }] },
      // A list inside `not`.
      { type: 'boolean', field_id: 'not_sport', title: 'No sport at all', conditions: [{ topic: { not: ['football', 'tennis'] } }] },
    ],
  };

  const cycles = {
    callback_url: SINK,
    instruction: 'Fill in the form about the clip.',
    attachments: [{ type: 'video', content: 'https://example.com/conformance/text-collection/clip.mp4' }, image('still')],
    fields: [
      {
        type: 'category',
        field_id: 'mood',
        title: 'Mood',
        min_choices: 1,
        max_choices: 2,
        choices: [
          { label: 'Calm', value: 'calm' },
          { label: 'Tense', value: 'tense' },
          { label: 'Funny', value: 'funny' },
        ],
      },
      // A cycle: each of these two is conditioned on the other, so both count as hidden.
      {
        type: 'category',
        field_id: 'cycle_a',
        title: 'Cycle A',
        choices: [
          { label: 'X', value: 'x' },
          { label: 'Y', value: 'y' },
        ],
        conditions: [{ cycle_b: { not: 'x' } }],
      },
      {
        type: 'category',
        field_id: 'cycle_b',
        title: 'Cycle B',
        choices: [
          { label: 'X', value: 'x' },
          { label: 'Y', value: 'y' },
        ],
        conditions: [{ cycle_a: { not: 'x' } }, { mood: 'calm' }],
      },
      // A condition on a field declared later, with a `not` of a list.
      { type: 'text', field_id: 'why_tense', title: 'Why tense?', conditions: [{ scene: { not: ['indoor', 'night'] }, mood: 'tense' }] },
      {
        type: 'category',
        field_id: 'scene',
        title: 'Scene',
        choices: [
          { label: 'Indoor', value: 'indoor' },
          {
            label: 'Outdoor',
            value: 'outdoor',
            subchoices: [
              { label: 'Day', value: 'day' },
              { label: 'Night', value: 'night' },
            ],
          },
        ],
      },
      {
        type: 'category',
        field_id: 'pairs',
        title: 'Two tags',
        min_choices: 2,
        max_choices: 2,
        min_responses_required: 2,
        max_responses_required: 3,
        choices: [
          { label: 'A', value: 'a' },
          { label: 'B', value: 'b' },
          { label: 'C', value: 'c' },
        ],
      },
      // Dates: yearless 31 April → 30 April; 29 February 2023 → 28; a preset day without a month.
      { type: 'datetime', field_id: 'anniversary', title: 'Anniversary', include: ['month', 'day'], defaults: { month: 4, day: '31' } },
      {
        type: 'datetime',
        field_id: 'not_leap',
        title: 'Not a leap year',
        include: ['year', 'month', 'day', 'hour', 'minute'],
        defaults: { year: 2023, month: 2, day: 29, minute: 0 },
      },
      {
        type: 'datetime',
        field_id: 'day_only_month_free',
        title: 'Day kept',
        include: ['year', 'month', 'day'],
        defaults: { day: 31 },
        max_responses_required: 3,
        min_responses_required: 3,
      },
      { type: 'datetime', field_id: 'just_day', title: 'Day', include: ['day'] },
      { type: 'datetime', field_id: 'just_year', title: 'Year', include: ['year'], defaults: { year: '1987' } },
      // Time ranges: the other spelling near the end of the day; an empty range by the hour; a decimal step.
      {
        type: 'time_range',
        field_id: 'late',
        title: 'Late',
        defaults_seconds: [86390, 86400],
        increment_seconds: 7,
        max_responses_required: 3,
      },
      { type: 'time_range', field_id: 'hourly', title: 'Hourly', default_seconds: [0, 0], increment_seconds: 3600 },
      {
        type: 'time_range',
        field_id: 'fine',
        title: 'Fine',
        default_seconds: ['1.5', 20],
        increment_seconds: '2.5',
        min_responses_required: 2,
        max_responses_required: 2,
      },
      // Number grids: a negative decimal min, only a min, min equal to max, string bounds.
      {
        type: 'number',
        field_id: 'tilt',
        title: 'Tilt',
        min: -1.5,
        max: 2,
        step: 0.25,
        max_responses_required: 4,
        min_responses_required: 3,
      },
      { type: 'number', field_id: 'from_ten', title: 'From ten', min: 10, step: 0.1 },
      { type: 'number', field_id: 'fixed', title: 'Fixed', min: 5, max: 5, step: 3 },
      { type: 'number', field_id: 'stringy', title: 'String bounds', min: '0.1', max: '1', step: '0.3' },
      { type: 'number', field_id: 'below_zero', title: 'Only a negative max', max: -2.5, step: 0.5, max_responses_required: 2 },
      // Selects: from a text field's answers, from choices and a category's answers, from a hidden field (no option: absent).
      { type: 'text', field_id: 'nickname', title: 'Nicknames', max_characters: 8, min_responses_required: 2, max_responses_required: 3 },
      { type: 'select', field_id: 'best_nickname', title: 'Best nickname', choices_from_field: 'nickname' },
      {
        type: 'select',
        field_id: 'mood_or_none',
        title: 'Mood or none',
        choices: ['none'],
        choices_from_field: 'mood',
        max_responses_required: 2,
      },
      { type: 'select', field_id: 'from_cycle', title: 'From a hidden field', choices_from_field: 'cycle_a' },
      { type: 'ranking_order', field_id: 'one_of_two', title: 'Best', num_items_to_rank: 1 },
      { type: 'ranking_order', field_id: 'both', title: 'Both', min_responses_required: 2, max_responses_required: 2 },
    ],
  };

  const forms = {
    callback_url: SINK,
    instruction: 'Describe each product on the shelf, then review the shelf.',
    title: 'Shelf audit',
    description: 'One product form per product.',
    attachments: [
      { ...image('shelf'), forms: ['product'] },
      image('receipt'),
      { type: 'pdf', content: 'https://example.com/conformance/text-collection/catalogue.pdf', forms: ['review', 'extra'] },
    ],
    fields: [
      // Declared before the form it depends on: conditions and choices_from_field on another form's child.
      {
        type: 'form',
        field_id: 'review',
        title: 'Shelf review',
        fields: [
          { type: 'select', field_id: 'favourite_kind', title: 'Favourite kind', choices_from_field: 'kind' },
          { type: 'number', field_id: 'overall', title: 'Overall', min: 1, max: 10, step: 0.5 },
          { type: 'text', field_id: 'food_note', title: 'About the food', conditions: [{ kind: 'food' }] },
          // A sibling declared later.
          { type: 'text', field_id: 'later_note', title: 'Note', max_characters: 3, conditions: [{ later: 'y' }] },
          {
            type: 'category',
            field_id: 'later',
            title: 'Later',
            choices: [
              { label: 'Y', value: 'y' },
              { label: 'N', value: 'n' },
            ],
          },
        ],
      },
      {
        type: 'form',
        field_id: 'product',
        title: 'Product',
        min_responses_required: 2,
        max_responses_required: 4,
        fields: [
          { type: 'text', field_id: 'product_name', title: 'Name', required: true, max_characters: 20 },
          {
            type: 'fieldset',
            title: 'Price',
            incline: true,
            fields: [
              { type: 'number', field_id: 'price', title: 'Price', min: 0, max: 100, step: 0.01 },
              { type: 'select', field_id: 'currency', title: 'Currency', choices: ['EUR', 'USD'] },
            ],
          },
          {
            type: 'category',
            field_id: 'kind',
            title: 'Kind',
            choices: [
              { label: 'Food', value: 'food' },
              {
                label: 'Tool',
                value: 'tool',
                subchoices: [
                  { label: 'Hammer', value: 'hammer' },
                  { label: 'Saw', value: 'saw' },
                ],
              },
              { label: 'Other', value: 'other' },
            ],
          },
          // Conditions on a sibling of the same filling.
          {
            type: 'number',
            field_id: 'tool_weight',
            title: 'Weight',
            min: 0.2,
            max: 3,
            step: 0.2,
            conditions: [{ kind: ['hammer', 'saw'] }],
          },
          {
            type: 'datetime',
            field_id: 'expiry',
            title: 'Expiry',
            include: ['year', 'month', 'day'],
            defaults: { month: 6, day: 31 },
            conditions: [{ kind: 'food' }],
          },
          {
            type: 'category',
            field_id: 'tags',
            title: 'Tags',
            min_choices: 1,
            max_choices: 2,
            min_responses_required: 2,
            max_responses_required: 3,
            conditions: [{ kind: { not: 'other' } }],
            choices: [
              { label: 'New', value: 'new' },
              { label: 'Sale', value: 'sale' },
              { label: 'Eco', value: 'eco' },
            ],
          },
          // A cycle between siblings: both hidden in every filling.
          {
            type: 'category',
            field_id: 'loop_1',
            title: 'Loop 1',
            choices: [{ label: 'Q', value: 'q' }],
            conditions: [{ loop_2: { not: 'z' } }],
          },
          {
            type: 'category',
            field_id: 'loop_2',
            title: 'Loop 2',
            choices: [{ label: 'Q', value: 'q' }],
            conditions: [{ loop_1: { not: 'z' } }],
          },
          // A chain through a sibling that may be hidden in this filling (whatever another filling chose).
          {
            type: 'category',
            field_id: 'grip',
            title: 'Grip',
            conditions: [{ kind: ['hammer', 'saw'] }],
            choices: [
              { label: 'Rubber', value: 'rubber' },
              { label: 'Wood', value: 'wood' },
            ],
          },
          { type: 'text', field_id: 'grip_care', title: 'Grip care', conditions: [{ grip: 'wood' }] },
          { type: 'boolean', field_id: 'no_wood', title: 'No wood', conditions: [{ grip: { not: 'wood' } }] },
          { type: 'select', field_id: 'name_again', title: 'Name again', choices_from_field: 'product_name' },
          {
            type: 'time_range',
            field_id: 'on_screen',
            title: 'On screen',
            default_seconds: [3, 9],
            increment_seconds: 2,
            max_responses_required: 2,
          },
          { type: 'ranking_order', field_id: 'photos', title: 'Best photos', num_items_to_rank: 2 },
          { type: 'boolean', field_id: 'in_stock', title: 'In stock' },
        ],
      },
      // A form shown by a condition on another form's child (any filling), answered several times.
      {
        type: 'form',
        field_id: 'extra',
        title: 'Tool details',
        max_responses_required: 2,
        conditions: [{ kind: 'hammer' }],
        fields: [
          { type: 'boolean', field_id: 'sharp', title: 'Sharp' },
          { type: 'select', field_id: 'which_tag', title: 'Which tag', choices_from_field: 'tags' },
        ],
      },
      // Never shown: `tool` has subchoices.
      {
        type: 'form',
        field_id: 'never_form',
        title: 'Never',
        conditions: [{ kind: 'tool' }],
        fields: [{ type: 'text', field_id: 'never_child', title: 'Never' }],
      },
    ],
  };

  const stringly = {
    callback_url: SINK,
    instruction: 'Rate the three thumbnails.',
    attachments: [
      image('thumb-1'),
      image('thumb-2'),
      image('thumb-3'),
      { type: 'website', content: 'https://example.com/conformance/text-collection/page' },
    ],
    fields: [
      {
        type: 'form',
        field_id: 'rating',
        title: 'Rating',
        min_responses_required: '2',
        max_responses_required: '3',
        required: 'true',
        fields: [
          {
            type: 'category',
            field_id: 'verdict',
            title: 'Verdict',
            min_choices: '1',
            max_choices: '2',
            choices: [
              { label: 'Good', value: 'good' },
              { label: 'Bad', value: 'bad' },
              { label: 'Meh', value: 3 },
            ],
          },
          {
            type: 'fieldset',
            incline: 'true',
            fields: [
              {
                type: 'number',
                field_id: 'score',
                title: 'Score',
                use_slider: 'true',
                min: '0.1',
                max: '0.9',
                step: '0.25',
                min_responses_required: '2',
                max_responses_required: '2',
              },
              { type: 'text', field_id: 'reason', title: 'Reason', max_characters: '4', conditions: [{ verdict: 'bad' }, { verdict: 3 }] },
            ],
          },
          { type: 'ranking_order', field_id: 'order', title: 'Order', num_items_to_rank: '3', max_responses_required: '2' },
          { type: 'time_range', field_id: 'glance', title: 'Glance', default_seconds: ['60', '61'], increment_seconds: '30' },
          {
            type: 'select',
            field_id: 'verdict_again',
            title: 'Verdict again',
            choices_from_field: 'verdict',
            max_responses_required: '3',
            min_responses_required: '2',
          },
          {
            type: 'datetime',
            field_id: 'seen',
            title: 'Seen',
            include: ['month', 'day', 'hour'],
            defaults: { month: '2', day: '30', hour: '0' },
          },
        ],
      },
    ],
  };

  // A select declared before the field it takes its options from.
  const selectFirst = {
    callback_url: SINK,
    instruction: 'Pick a colour, then the best of the picked ones.',
    attachments: [{ type: 'text', content: 'A palette.' }],
    fields: [
      { type: 'select', field_id: 'best_colour', title: 'Best of the picked colours', choices_from_field: 'colours' },
      {
        type: 'category',
        field_id: 'colours',
        title: 'Colours',
        min_choices: 1,
        max_choices: 3,
        choices: [
          { label: 'Red', value: 'red' },
          { label: 'Green', value: 'green' },
          { label: 'Blue', value: 'blue' },
        ],
      },
    ],
  };
  return [flat, cycles, forms, stringly, selectFirst];
}
