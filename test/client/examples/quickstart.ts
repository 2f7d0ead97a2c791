import { createClient } from '../../../client/index.ts';

const client = createClient({
  apiKey: process.env.HUMANTASK_API_KEY!, // a test_... or live_... key
  baseUrl: process.env.HUMANTASK_URL!, // the service's origin, e.g. http://127.0.0.1:8080
});

// The body is typed by the task type: a misspelt parameter does not compile.
const created = await client.tasks.create('categorization', {
  callback_url: 'https://example.com/humantask/callback',
  instruction: 'Choose the category of the ticket.',
  attachment_type: 'text',
  attachment: 'I was charged twice for my subscription this month.',
  categories: ['billing', 'technical', 'other'],
  unique_id: `ticket-${Date.now()}`,
});
if (!created.ok) throw new Error(`creation failed: ${created.status} ${created.error.error}`);
const taskId = created.data.task_id;

// With a test key the task is completed at once, with a synthetic response.
const got = await client.tasks.get(taskId);
if (got.ok && got.data.type === 'categorization' && got.data.status === 'completed') {
  console.log('response:', got.data.response); // typed as the categorization response
}

await client.tasks.setMetadata(taskId, { ticket: 'T-1041' });
await client.tasks.addTags(taskId, ['billing']);
await client.tasks.audit(taskId, { accepted: true });
