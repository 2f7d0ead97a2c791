// Work over the worker API in tests: a worker takes their next assignment and answers it.
import { expect } from 'vitest';
import type { workerClient } from './workers.ts';

/**
 * The worker takes their next work (which must be of `taskId`) and submits `response` for it: the
 * assignment taken. The submit must be accepted (`submitted`).
 */
export async function takeAndSubmit(call: ReturnType<typeof workerClient>, taskId: string, response: unknown) {
  const next = await call('POST', '/v1/assignments/next', {});
  expect(next.status, next.text).toBe(200);
  expect(next.body.task.task_id).toBe(taskId);
  const done = await call('POST', `/v1/assignments/${next.body.assignment_id}/submit`, {
    lease_token: next.body.lease_token,
    response,
    active_ms: 1000,
  });
  expect(done.status, done.text).toBe(200);
  expect(done.body.status).toBe('submitted');
  return next.body;
}
