import { createWorkerClient, HumantaskError } from '../../../client/index.ts';

// A scripted worker: logs in (the client keeps the session token), then takes work until none comes.
const worker = createWorkerClient({ baseUrl: process.env.HUMANTASK_URL!, throwOnError: true });
await worker.login(process.env.HUMANTASK_WORKER_EMAIL!, process.env.HUMANTASK_WORKER_PASSWORD!);

for (;;) {
  // A long poll: waits up to 5 s for work, then answers 204 (ask again after Retry-After).
  const next = await worker.next({ role: 'attempt', wait: 5 });
  if (next.status === 204) break;
  const { assignment_id: id, lease_token, task } = next.data;
  if (task.type !== 'categorization') {
    await worker.skip(id, { lease_token: lease_token!, reason: 'This script only answers categorizations.' });
    continue;
  }
  const category = task.params.categories?.[0] ?? 'other';
  try {
    // Keep the lease (and save a draft) while working; send one every 20 to 30 s.
    await worker.heartbeat(id, { lease_token: lease_token!, active_ms: 1000, draft: { category } });
    // The answer is checked against the task's type and params (400 naming the rule). An
    // Idempotency-Key goes with it, so a retry after a lost answer stores it once.
    const done = await worker.submit(id, { lease_token: lease_token!, active_ms: 1000, response: { category } });
    console.log(`task ${task.task_id}: ${done.data.status} (${category})`);
  } catch (err) {
    // The lease lapsed or the customer canceled the task: move on to the next one.
    if (!(err instanceof HumantaskError) || err.status !== 409) throw err;
    console.log(`task ${task.task_id}: ${err.body.code}`);
  }
}
console.log('no more work for now');
