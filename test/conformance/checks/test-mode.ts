// Seed 5.3 (test mode) and 3.1 (pending → completed): a test-mode task is completed without a
// person, with a response that fits its type and its own parameters.
import { expectThat, type Check } from '../types.ts';
import { annotation, categorization, comparison, createTask, settledTask } from './helpers.ts';

const area = 'Test mode';

const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

export const testModeChecks: Check[] = [
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
        Array.isArray(ids) && ids.length === (chosen as unknown[]).length && ids.every((id: unknown) => typeof id === 'string' && ['b', 's', 'x'].includes(id)),
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
];
