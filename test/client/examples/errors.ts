import { createClient, HumantaskError } from '../../../client/index.ts';

const options = { apiKey: process.env.HUMANTASK_API_KEY!, baseUrl: process.env.HUMANTASK_URL! };

// By default an error answer is returned: narrow on `ok` or on `status` (the statuses the
// contract documents for the operation); `error` is always `{status_code, error}`.
const client = createClient(options);
const res = await client.tasks.get('65f1c0a2b3c4d5e6f7a8b9c0');
if (res.ok) console.log('status:', res.data.status);
else if (res.status === 404) console.log('no such task:', res.error.error);
else console.log('failed:', res.status, res.error.error);

// Or have errors thrown, and tune the retries.
const strict = createClient({ ...options, throwOnError: true, retry: { retries: 5, minDelayMs: 500, maxDelayMs: 20_000 } });
try {
  await strict.tasks.cancel('65f1c0a2b3c4d5e6f7a8b9c0');
} catch (err) {
  if (!(err instanceof HumantaskError)) throw err; // a network failure after the last retry
  console.log(err.status, err.operation, err.body.error, err.requestId ?? '(no request id)');
}
