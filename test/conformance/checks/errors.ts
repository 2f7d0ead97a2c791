// Seed 7 (errors) and the contract's general rules: every error is {status_code, error}; a
// validation message names the offending field; bodies over 10 MB get 413; unknown extra
// parameters are ignored and numeric strings accepted where a number is expected; a POST or
// DELETE without a body is accepted even with Content-Type: application/json.
import { expectStatus, expectThat, type Check } from '../types.ts';
import { SINK, annotation, categorization, createTask, expectError, idsOf, listTasks, postTask } from './helpers.ts';

const area = 'Errors';

export const errorChecks: Check[] = [
  {
    id: 'errors/malformed-json-400',
    area,
    seed: '7 Errors (400: malformed request)',
    rule: 'A body that is not JSON, sent as application/json, gets 400 {status_code, error}.',
    kind: 'behaviour',
    async run(ctx) {
      const ex = await ctx.call('POST', '/v1/task/categorization', { form: '{"instruction": "unfinished', headers: { 'content-type': 'application/json' } });
      expectError(ex, 400, 'a creation whose body is not JSON');
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
      expectThat(Number(task.params?.min_width) === 30, `params.min_width should be 30, got ${JSON.stringify(task.params?.min_width)}`, task.params);
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
      expectStatus(await ctx.call('DELETE', `/v1/task/${task.task_id}/unique_id`, { headers }), 200, 'DELETE unique_id without a body, with Content-Type: application/json');
      const cancel = await ctx.call('POST', `/v1/task/${task.task_id}/cancel`, { headers });
      // A test-mode task is completed already: the cancel rules answer, not a body error.
      expectThat(cancel.status !== 400 || !/body/i.test(String(cancel.body?.error)), `cancel without a body was refused for its body: ${cancel.text.slice(0, 300)}`);
    },
  },
];
