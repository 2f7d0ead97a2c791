// The account settings the contract names without an endpoint to change them (an operator sets
// them): a test-completion delay (so that cancel flows can be tried in test mode), task types not
// enabled for the account (402), a default callback URL (callback_url may then be left out). They
// are tried with `--settings-key`: the test key of an account with a test-completion delay of at
// least 1 s (a task read right after its creation is still pending), DISABLED_TYPES disabled and
// a default callback URL (the CLI's usage and docs/conformance.md say the same).
import { loadContract } from '../contract.ts';
import { isRecord, personalize, requestExamples } from '../fixtures.ts';
import { expectStatus, expectThat, type Check } from '../types.ts';
import { categorization, expectError, readTask } from './helpers.ts';

const area = 'Account settings';

/** The types the settings account has disabled: both exist in both generations, one also as a training task. */
export const DISABLED_TYPES = ['audiotranscription', 'segmentannotation'] as const;

const key = 'settings' as const;

export const accountSettingChecks: Check[] = [
  {
    id: 'account-settings/test-completion-delay',
    area,
    seed: '5 Authentication (3: test mode; an account setting delays test completion so that cancel flows can be tried)',
    rule: 'With a test-completion delay, a test task stays pending and can be canceled until the delay has passed; then the server completes it by itself (its callback arrives unasked) with a valid response, and a canceled one stays canceled.',
    kind: 'behaviour',
    needs: ['settingsKey', 'callback'],
    async run(ctx) {
      const receiver = await ctx.receiver();
      const label = ctx.unique('delayed');
      const create = async () => {
        const ex = await ctx.call('POST', '/v1/task/categorization', { key, json: categorization({ callback_url: receiver.url(label) }) });
        expectStatus(ex, 200, 'creating a test task on the account with a test-completion delay');
        return ex.body.task_id as string;
      };
      const [waiting, canceled] = [await create(), await create()];
      const early = await readTask(ctx, waiting, key);
      expectThat(
        early.status === 'pending' && early.response == null,
        'a test task read right after its creation should still be pending, without a response, while the completion delay runs',
        early,
      );
      const cancel = await ctx.call('POST', `/v1/task/${canceled}/cancel`, { key });
      expectStatus(cancel, 200, 'canceling a test task while its completion delay runs');
      expectThat(cancel.body?.status === 'canceled', 'the cancel answer should show the task canceled', cancel.body);

      // Nobody reads the task meanwhile: its callback shows that the server completed it by itself.
      const [callback] = await ctx.until(
        `the callback of the delayed task ${waiting}`,
        async () => {
          const got = receiver.received(label).filter((r) => r.body?.task_id === waiting || r.body?.task?.task_id === waiting);
          return got.length > 0 ? got : undefined;
        },
        60_000,
      );
      expectThat(
        callback?.body?.response && typeof callback.body.response.category === 'string',
        'the callback of the delayed task should carry its response',
        callback?.body,
      );
      const done = await readTask(ctx, waiting, key);
      expectThat(
        done.status === 'completed' && ['billing', 'support', 'sales'].includes(done.response?.category),
        'once the delay has passed, the task should be completed with a category of its own',
        done,
      );
      const still = await readTask(ctx, canceled, key);
      expectThat(
        still.status === 'canceled' && still.response == null,
        'a test task canceled during its completion delay should stay canceled, without a response',
        still,
      );
      expectThat(
        !receiver.received(label).some((r) => r.body?.task_id === canceled || r.body?.task?.task_id === canceled),
        'a task canceled during its delay should get no completion callback',
      );
    },
  },
  {
    id: 'account-settings/disabled-types',
    area,
    seed: '4 Task creation (402: the task type is not enabled for the account)',
    rule: 'Creating a task (or a training task) of a type not enabled for the account answers 402 with an error naming the type and stores nothing; enabled types are created as usual.',
    kind: 'behaviour',
    needs: ['settingsKey'],
    async run(ctx) {
      const contract = loadContract(ctx.generation);
      const exampleFor = async (path: string) => {
        const op = [...contract.byId.values()].find((o) => o.method === 'post' && o.path === path);
        const example =
          op && requestExamples(contract, op).find(([, v]) => isRecord(v) && v.project === undefined && v.batch === undefined);
        if (!op || !example) throw new Error(`the ${ctx.generation} contract has no standalone example for POST ${path}`);
        return personalize(ctx, op, example[1]);
      };
      for (const path of [...DISABLED_TYPES.map((t) => `/v1/task/${t}`), '/v1/training_tasks/segmentannotation']) {
        const type = path.split('/').pop()!;
        const list = path.includes('training') ? '/v1/training_tasks' : '/v1/tasks';
        const before = await ctx.call('GET', list, { key, query: { type, limit: 1 } });
        expectStatus(before, 200, `listing the ${type} tasks of the settings account`);
        const ex = await ctx.call('POST', path, { key, json: await exampleFor(path) });
        expectError(ex, 402, `POST ${path} of a type the account has disabled`);
        expectThat(String(ex.body.error).includes(type), `the 402 message should name the type ${type}`, ex.body);
        const after = await ctx.call('GET', list, { key, query: { type, limit: 1 } });
        expectThat(
          after.body?.total === before.body?.total,
          `a refused ${type} creation should store nothing (total ${before.body?.total} before, ${after.body?.total} after)`,
          after.body,
        );
        const mainAccount = await ctx.call('POST', path, { json: await exampleFor(path) });
        expectStatus(mainAccount, 200, `POST ${path} on the main account, which has ${type} enabled`);
      }
      expectStatus(
        await ctx.call('POST', '/v1/task/categorization', {
          key,
          json: categorization({ callback_url: (await ctx.receiver()).url('sink') }),
        }),
        200,
        'creating a task of an enabled type on the settings account',
      );
    },
  },
  {
    id: 'account-settings/default-callback-url',
    area,
    seed: '4 Task creation (callback_url: required unless the account has a default callback URL)',
    rule: 'An account with a default callback URL may leave callback_url out: the task is created (its callbacks go to the default) and stored.',
    kind: 'behaviour',
    needs: ['settingsKey'],
    async run(ctx) {
      const { callback_url: _left, ...body } = categorization();
      const ex = await ctx.call('POST', '/v1/task/categorization', { key, json: body });
      expectStatus(ex, 200, 'creating a task without callback_url on the account with a default callback URL');
      const stored = await readTask(ctx, ex.body.task_id, key);
      expectThat(
        stored.task_id === ex.body.task_id && stored.type === 'categorization',
        'the task created without callback_url should be stored',
        stored,
      );
    },
  },
];
