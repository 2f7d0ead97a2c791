import { createClient, createLegacyClient } from '../../../client/index.ts';

const options = { apiKey: process.env.HUMANTASK_API_KEY!, baseUrl: process.env.HUMANTASK_URL! };
const client = createClient(options);
const legacy = createLegacyClient(options); // the same origin: the client adds /legacy

// Every matching task, newest first; pages of `limit` are fetched as the loop needs them.
let completed = 0;
for await (const task of client.tasks.iterate({ status: ['completed'], limit: 50 })) {
  if (task.type === 'categorization') completed++;
}
console.log('completed categorization tasks:', completed);

// The older generation pages by offset; its iterator still yields each task once.
for await (const task of legacy.tasks.iterate({ type: ['categorization'] })) {
  console.log(task.task_id, task.urgency);
  break; // leaving the loop stops fetching
}

for await (const batch of client.batches.iterate({ status: ['in_progress'] })) console.log('batch:', batch.name);

// One page at a time, and the typed paths underneath (openapi-fetch).
const page = await client.tasks.list({ limit: 10 });
if (page.ok && page.data.next_token) await client.tasks.list({ limit: 10, next_token: page.data.next_token });
const { data } = await client.GET('/v1/tasks', { params: { query: { limit: 1 } } });
console.log('total:', data?.total);
