// Seed 7 (errors) and the contract's general rules: every error is {status_code, error}; a
// validation message names the offending field; bodies over 10 MB get 413; unknown extra
// parameters (names no creation documents) are ignored and numeric strings accepted where a number is expected; a POST or
// DELETE without a body is accepted even with Content-Type: application/json.
import { expectStatus, expectThat, type Check } from '../types.ts';
import { SINK, annotation, categorization, createTask, expectError, idsOf, listTasks, postTask, withSink } from './helpers.ts';

const area = 'Errors';

export const errorChecks: Check[] = [
  {
    id: 'errors/malformed-json-400',
    area,
    seed: '7 Errors (400: malformed request)',
    rule: 'A body that is not JSON, sent as application/json, gets 400 {status_code, error}.',
    kind: 'behaviour',
    async run(ctx) {
      const ex = await ctx.call('POST', '/v1/task/categorization', {
        form: '{"instruction": "unfinished',
        headers: { 'content-type': 'application/json' },
      });
      expectError(ex, 400, 'a creation whose body is not JSON');
    },
  },
  {
    id: 'errors/unstorable-input-400',
    area,
    seed: '7 Errors (400: malformed request)',
    rule: "JSON nested deeper than 64 levels, the character U+0000 or a lone UTF-16 surrogate in text and a number beyond JSON's range (1e309) each get 400 naming the problem, and create nothing; without a key such a body gets 401, unread.",
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('unstorable');
      const body = JSON.stringify(await withSink(ctx, categorization({ tags: [tag], metadata: { at: 0 } })));
      const json = { 'content-type': 'application/json' };
      const cases: [string, string, string][] = [
        ['a body nested 65 levels deep', body.replace('"at":0', `"at":${'['.repeat(63)}${']'.repeat(63)}`), '64'],
        ['a lone surrogate in metadata', body.replace('"at":0', '"at":"\\ud800"'), 'metadata'],
        ['U+0000 in metadata', body.replace('"at":0', '"at":"a\\u0000b"'), 'metadata'],
        ['1e309 in metadata', body.replace('"at":0', '"at":1e309'), 'metadata'],
      ];
      for (const [what, text, named] of cases) {
        const ex = await ctx.call('POST', '/v1/task/categorization', { form: text, headers: json });
        expectError(ex, 400, what);
        expectThat(
          String(ex.body?.error).includes(named),
          `the 400 for ${what} should name ${named}, got ${JSON.stringify(ex.body?.error)}`,
        );
        expectStatus(
          await ctx.call('POST', '/v1/task/categorization', { form: text, headers: json, key: 'none' }),
          401,
          `${what} without a key`,
        );
      }
      const stored = idsOf((await listTasks(ctx, { tags: tag })).docs);
      expectThat(stored.length === 0, `no task should be created, found ${stored.length}`, stored);
    },
  },
  {
    id: 'errors/too-large-413',
    area,
    seed: '7 Errors (413: request body larger than 10 MB)',
    rule: 'A creation body larger than 10 MB gets 413 {status_code, error} and creates nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('large');
      const ex = await postTask(ctx, 'categorization', categorization({ tags: [tag], attachment: 'x'.repeat(10.5 * 1024 * 1024) }));
      expectError(ex, 413, 'a creation body of 10.5 MB');
      const stored = idsOf((await listTasks(ctx, { tags: tag })).docs);
      expectThat(stored.length === 0, `no task should be created, found ${stored.length}`, stored);
    },
  },
  {
    id: 'errors/unknown-endpoint-404',
    area,
    seed: '7 Errors (404)',
    rule: 'A path that is no endpoint of the API gets 404 {status_code, error}.',
    kind: 'behaviour',
    async run(ctx) {
      expectError(await ctx.call('GET', '/v1/no-such-endpoint'), 404, 'GET /v1/no-such-endpoint');
    },
  },
  {
    id: 'errors/names-the-field',
    area,
    seed: '7 Errors (400: the message names the missing or invalid parameter)',
    rule: "A creation missing a required parameter, or with one of the wrong type, gets 400 whose message names that parameter; a form body's too.",
    kind: 'behaviour',
    async run(ctx) {
      const { categories: _dropped, ...missing } = categorization();
      const cases: [string, Record<string, unknown>, string][] = [
        ['categories left out', missing, 'categories'],
        ['categories a number', categorization({ categories: 12.5 }), 'categories'],
        ['allow_multiple a word', categorization({ allow_multiple: 'maybe' }), 'allow_multiple'],
      ];
      for (const [what, body, field] of cases) {
        const ex = await postTask(ctx, 'categorization', body);
        expectError(ex, 400, `a categorization with ${what}`);
        expectThat(ex.body.error.includes(field), `the 400 for ${what} should name ${field}, got ${JSON.stringify(ex.body.error)}`);
      }
    },
  },
  {
    id: 'errors/extra-and-numeric-strings',
    area,
    seed: '4.2 (unknown extra parameters are accepted and ignored; numeric strings are accepted where a number is expected)',
    rule: 'A creation with an unknown extra parameter and a numeric string for a number (min_width "30") gets 200; the task keeps min_width as 30 and not the extra parameter.',
    kind: 'behaviour',
    async run(ctx) {
      const task = await createTask(ctx, 'annotation', annotation({ min_width: '30', conformance_extra: 'ignored' }));
      expectThat(
        Number(task.params?.min_width) === 30,
        `params.min_width should be 30, got ${JSON.stringify(task.params?.min_width)}`,
        task.params,
      );
      expectThat(!JSON.stringify(task).includes('conformance_extra'), 'an unknown extra parameter should be ignored, not stored', task);
    },
  },
  {
    id: 'errors/empty-json-body',
    area,
    seed: '4 (a POST or DELETE without a body is accepted even when it says Content-Type: application/json)',
    rule: 'DELETE /v1/task/{taskId}/unique_id and POST /v1/task/{taskId}/cancel without a body but with Content-Type: application/json are not refused for their body.',
    kind: 'behaviour',
    async run(ctx) {
      const task = await createTask(ctx, 'categorization', categorization({ unique_id: ctx.unique('uid'), callback_url: SINK }));
      const headers = { 'content-type': 'application/json' };
      expectStatus(
        await ctx.call('DELETE', `/v1/task/${task.task_id}/unique_id`, { headers }),
        200,
        'DELETE unique_id without a body, with Content-Type: application/json',
      );
      const cancel = await ctx.call('POST', `/v1/task/${task.task_id}/cancel`, { headers });
      // A test-mode task is completed already: the cancel rules answer, not a body error.
      expectThat(
        cancel.status !== 400 || !/body/i.test(String(cancel.body?.error)),
        `cancel without a body was refused for its body: ${cancel.text.slice(0, 300)}`,
      );
    },
  },
  {
    id: 'errors/form-bodies-typed',
    area,
    seed: '4.2 (older generation: creation bodies as application/x-www-form-urlencoded; numeric strings accepted where a number is expected)',
    rule: 'A form creation body gives each value the type the contract asks for: repeated keys a list (one key a one-item list), "true" and "False" booleans, "30" a number; a list of strings keeps numeric-looking strings as strings.',
    kind: 'behaviour',
    generations: ['legacy'],
    async run(ctx) {
      const receiver = await ctx.receiver();
      const form = (fields: [string, string][]) => new URLSearchParams([['callback_url', receiver.url('forms')], ...fields]).toString();
      const created = async (type: string, fields: [string, string][]) => {
        const ex = await ctx.call('POST', `/v1/task/${type}`, { form: form(fields) });
        expectStatus(ex, 200, `a ${type} creation as a form body`);
        return ex.body;
      };
      const boxes = await created('annotation', [
        ['instruction', 'Box the vehicles.'],
        ['attachment', 'https://example.com/conformance/street.jpg'],
        ['objects_to_annotate', 'car'],
        ['objects_to_annotate', 'truck'],
        ['with_labels', 'true'],
        ['min_width', '30'],
      ]);
      const p = boxes.params ?? {};
      expectThat(
        JSON.stringify(p.objects_to_annotate) === '["car","truck"]' && p.with_labels === true && p.min_width === 30,
        `expected objects_to_annotate ["car","truck"], with_labels true, min_width 30; got ${JSON.stringify({ objects_to_annotate: p.objects_to_annotate, with_labels: p.with_labels, min_width: p.min_width })}`,
        p,
      );
      const one = await created('annotation', [
        ['instruction', 'Box the cars.'],
        ['attachment', 'https://example.com/conformance/street.jpg'],
        ['objects_to_annotate', 'car'],
        ['with_labels', 'False'],
      ]);
      expectThat(
        JSON.stringify(one.params?.objects_to_annotate) === '["car"]',
        `a single objects_to_annotate key should be the list ["car"], got ${JSON.stringify(one.params?.objects_to_annotate)}`,
        one.params,
      );
      expectThat(
        one.params?.with_labels === false,
        `with_labels "False" should be the boolean false, got ${JSON.stringify(one.params?.with_labels)}`,
        one.params,
      );
      const numbers = await created('categorization', [
        ['instruction', 'Pick a floor.'],
        ['attachment_type', 'text'],
        ['attachment', 'Which floor?'],
        ['categories', '1'],
        ['categories', '2'],
      ]);
      expectThat(
        JSON.stringify(numbers.params?.categories) === '["1","2"]',
        `categories 1 and 2 should stay the strings ["1","2"], got ${JSON.stringify(numbers.params?.categories)}`,
        numbers.params,
      );
    },
  },
];
