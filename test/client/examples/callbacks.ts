import { createServer } from 'node:http';
import { callbackMiddleware, signCallback } from '../../../client/node.ts';

const secrets = {
  callbackAuthKey: process.env.HUMANTASK_CALLBACK_AUTH_KEY!, // cbauth_...
  signingSecret: process.env.HUMANTASK_SIGNING_SECRET!, // whsec_...
};

// Bad callbacks get 401; good ones reach the handler once (a retry of a processed message is
// answered 200 without calling it again); the answer is 200 when the handler returns.
const receiver = createServer(
  callbackMiddleware(secrets, async (callback) => {
    switch (callback.type) {
      case 'taskCompleted':
        console.log('task', callback.payload.task_id, 'completed:', callback.payload.response);
        break;
      case 'attachmentError':
        console.log(
          'attachment failed:',
          callback.payload.attachments.map((a) => a.url),
        );
        break;
      case 'batchCompleted':
        console.log('batch', callback.payload.batch.name, 'done:', callback.payload.counts);
        break;
    }
  }),
);
await new Promise<void>((resolve) => receiver.listen(Number(process.env.PORT ?? 0), resolve));
const { port } = receiver.address() as { port: number };

// Try it: sign a message the way the service does and deliver it.
const body = JSON.stringify({
  error: 'The attachment could not be fetched (HTTP 404).',
  attachments: [{ statusCode: 404, url: 'https://example.com/a.jpg' }],
});
const id = 'msg_65f1c0a2b3c4d5e6f7a8b9d1';
const timestamp = Math.floor(Date.now() / 1000);
const res = await fetch(`http://127.0.0.1:${port}/`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'service-callback-auth': secrets.callbackAuthKey,
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signCallback(secrets.signingSecret, id, timestamp, body),
  },
  body,
});
console.log('answer:', res.status); // 200
receiver.close();
