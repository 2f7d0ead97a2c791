// Seed 5.3 (test mode) and 3.1 (pending → completed): a test-mode task is completed without a
// person, with a response that fits its type and its own parameters.
import { isDeepStrictEqual } from 'node:util';
import { loadContract } from '../contract.ts';
import { operationsOfBothGenerations, operationOf } from '../core-checks.ts';
import { isRecord, operationKind, personalize, requestExamples } from '../fixtures.ts';
import { expectStatus, expectThat, type Check } from '../types.ts';
import { annotation, categorization, comparison, createTask, listTasks, readTask, settledTask } from './helpers.ts';
import { textCollectionProblems } from './test-mode-text-collection.ts';

const area = 'Test mode';

const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

export const testModeChecks: Check[] = [
  {
    id: 'test-mode/completed-before-answer',
    area,
    seed: '5 Authentication (3: test mode); decision: a test task is completed before the creation answer is sent',
    rule: 'Without a completion delay, a test-mode task is completed before its creation is answered: a list made right after the answer shows it completed, with its response.',
    kind: 'behaviour',
    async run(ctx) {
      // Three times: a server that completes test tasks a little later may win one race, not three.
      for (let i = 0; i < 3; i++) {
        const tag = ctx.unique('at-once');
        const created = await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
        const listed = (await listTasks(ctx, { tags: tag })).docs as any[];
        expectThat(
          listed.length === 1 &&
            listed[0].task_id === created.task_id &&
            listed[0].status === 'completed' &&
            listed[0].response !== undefined,
          'the list right after the creation answer should show the task completed, with its response',
          listed,
        );
      }
    },
  },
  {
    id: 'test-mode/completion',
    area,
    seed: '5 Authentication (3: test mode); 3.1 Task status > pending → completed; 6.1 response shapes',
    rule: 'A test-mode task is completed without a person: it becomes completed, with completed_at and a response valid for its type and parameters.',
    kind: 'behaviour',
    async run(ctx) {
      const single = categorization();
      const multiple = categorization({ allow_multiple: true, category_ids: { b: 'billing', s: 'support', x: 'sales' } });
      const created = await Promise.all([
        createTask(ctx, 'categorization', single),
        createTask(ctx, 'categorization', multiple),
        createTask(ctx, 'annotation', annotation()),
        createTask(ctx, 'comparison', comparison()),
      ]);
      const [one, many, boxes, compared] = await Promise.all(created.map((t) => settledTask(ctx, t.task_id, ['completed'])));
      for (const task of [one, many, boxes, compared]) {
        expectThat(typeof task.completed_at === 'string', `a completed ${task.type} task should have completed_at`, task);
        expectThat(task.response && typeof task.response === 'object', `a completed ${task.type} task should have a response`, task);
      }
      const categories = single.categories as string[];
      expectThat(
        typeof one.response.category === 'string' && categories.includes(one.response.category),
        `categorization (allow_multiple false): response.category should be one of ${JSON.stringify(categories)}`,
        one.response,
      );
      const chosen: unknown = many.response.category;
      expectThat(
        Array.isArray(chosen) && chosen.length > 0 && chosen.every((c) => categories.includes(c)),
        'categorization (allow_multiple true): response.category should be an array of the categories',
        many.response,
      );
      const ids = many.response.category_id;
      expectThat(
        Array.isArray(ids) &&
          ids.length === (chosen as unknown[]).length &&
          ids.every((id: unknown) => typeof id === 'string' && ['b', 's', 'x'].includes(id)),
        'categorization with category_ids and allow_multiple: response.category_id should be an array of the chosen ids',
        many.response,
      );
      const labels = annotation().objects_to_annotate as string[];
      expectThat(Array.isArray(boxes.response.annotations), 'annotation: response.annotations should be an array', boxes.response);
      for (const box of boxes.response.annotations as Array<Record<string, unknown>>) {
        expectThat(
          ['left', 'top', 'width', 'height'].every((k) => isNumber(box[k])) && labels.includes(box.label as string),
          `annotation: each box should have numeric left, top, width, height and a label from ${JSON.stringify(labels)}`,
          box,
        );
      }
      const choices = comparison().choices as string[];
      expectThat(
        typeof compared.response.choice === 'string' && choices.includes(compared.response.choice),
        `comparison with choices: response.choice should be one of ${JSON.stringify(choices)}`,
        compared.response,
      );
    },
  },
  ...responseChecks(),
];

/** Every string anywhere in `value`. */
function stringsIn(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === 'string') out.add(value);
  else if (Array.isArray(value))
    value.forEach((v) => {
      stringsIn(v, out);
    });
  else if (isRecord(value))
    Object.values(value).forEach((v) => {
      stringsIn(v, out);
    });
  return out;
}

/** Every (key, value, path) in `value`, depth first. */
function* fields(value: unknown, path = ''): Generator<[string, unknown, string]> {
  if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* fields(v, `${path}/${i}`);
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      yield [k, v, `${path}/${k}`];
      yield* fields(v, `${path}/${k}`);
    }
  }
}

const coordinates = new Set(['left', 'top', 'width', 'height', 'x', 'y']);

/**
 * For each task type: the contract's own request examples, created in test mode, complete with a
 * response that the runner's shape check validates against the type's response schema (it checks
 * every answer), whose labels come from the task's parameters and whose shapes lie in the image,
 * and that reads the same twice.
 */
function responseChecks(): Check[] {
  return operationsOfBothGenerations()
    .filter(({ operationId, generations }) => operationKind(loadContract(generations[0]!).byId.get(operationId)!) === 'task-creation')
    .map(({ operationId, generations }) => ({
      id: `test-mode/responses/${operationId}`,
      area,
      seed: "5 Authentication (3: test mode: a synthetic response valid for the type and the task's own parameters, the same every time)",
      rule: "Each request example of the operation, created in test mode, completes with a response valid for its type, labels from the task's parameters, shapes inside the image (no negative coordinate or size), the same on a second read.",
      kind: 'behaviour' as const,
      generations,
      async run(ctx) {
        const { contract, op } = operationOf(ctx, operationId);
        // Examples naming a project or batch rely on objects that exist only in the example.
        const examples = requestExamples(contract, op).filter(([, v]) => isRecord(v) && v.project === undefined && v.batch === undefined);
        if (examples.length === 0) {
          ctx.note(`no example of ${operationId} stands alone (each names a project or batch)`);
          return;
        }
        for (const [name, example] of examples) {
          const created = await ctx.call('POST', op.path, { json: await personalize(ctx, op, example) });
          if (created.status === 402) {
            ctx.note(`example ${name}: 402, the task type is not enabled for this account`);
            continue;
          }
          expectStatus(created, 200, `creating the example ${name} of ${operationId}`);
          const task = await settledTask(ctx, created.body.task_id, ['completed']);
          const labels = stringsIn(task.params);
          for (const [key, value, path] of fields(task.response)) {
            if (key === 'label' && typeof value === 'string') {
              expectThat(
                labels.has(value),
                `example ${name}: response${path} is ${JSON.stringify(value)}, which no parameter of the task names`,
                task.response,
              );
            }
            if (coordinates.has(key) && typeof value === 'number') {
              expectThat(value >= 0, `example ${name}: response${path} is ${value}: a shape should lie inside the image`, task.response);
            }
          }
          for (const problem of [...nerProblems(task), ...textCollectionProblems(task)])
            expectThat(false, `example ${name}: ${problem}`, task.response);
          const again = await readTask(ctx, task.task_id);
          expectThat(isDeepStrictEqual(again.response, task.response), `example ${name}: the response should read the same every time`, {
            first: task.response,
            again: again.response,
          });
        }
      },
    }));
}

/** NER spans lie inside the task's text and quote it (offsets in code points, end exclusive); relationships join spans of the response. */
function nerProblems(task: any): string[] {
  if (task.type !== 'namedentityrecognition') return [];
  const text = [...String(task.params?.text ?? '')];
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const [i, span] of (task.response.annotations ?? []).entries()) {
    if (!(span.start < span.end && span.end <= text.length))
      problems.push(
        `response/annotations/${i} [${span.start}, ${span.end}) is not a span inside the ${text.length} characters of the text`,
      );
    else if (text.slice(span.start, span.end).join('') !== span.text)
      problems.push(`response/annotations/${i}/text ${JSON.stringify(span.text)} is not the text from ${span.start} to ${span.end}`);
    ids.add(span.id);
  }
  const labelOf = new Map<string, string>((task.response.annotations ?? []).map((a: any) => [a.id, a.label]));
  const definitions: any[] = Array.isArray(task.params?.relationships) ? task.params.relationships : [];
  for (const [i, r] of (task.response.relationships ?? []).entries()) {
    if (r.source_ref === r.target_ref) problems.push(`response/relationships/${i} joins span ${JSON.stringify(r.source_ref)} to itself`);
    const definition = definitions.find((d) => d?.name === r.name);
    for (const [end, wanted] of [
      ['source_ref', definition?.source_label],
      ['target_ref', definition?.target_label],
    ] as const) {
      if (!ids.has(r[end])) problems.push(`response/relationships/${i}/${end} ${JSON.stringify(r[end])} is no span of the response`);
      else if (typeof wanted === 'string' && labelOf.get(r[end]) !== wanted)
        problems.push(`response/relationships/${i}/${end} is a ${labelOf.get(r[end])} span, the relationship's definition wants ${wanted}`);
    }
  }
  return problems;
}
