// Receiving callbacks: verifyCallback (auth key, Standard Webhooks signature, timestamp, replay)
// and callbackMiddleware on node:http and Express, with the contract's callback examples.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CallbackVerificationError,
  callbackMiddleware,
  createReplayCache,
  signCallback,
  verifyCallback,
  type CallbackMiddlewareOptions,
  type VerifiedCallback,
} from '../../../client/node.ts';
import { deref, loadBundle, type Generation, type Json } from '../../support/spec.ts';

const secret = 'whsec_' + randomBytes(32).toString('base64');
const authKey = 'cbauth_' + randomBytes(16).toString('hex');
const base = (extra: Partial<CallbackMiddlewareOptions> = {}): CallbackMiddlewareOptions => ({
  callbackAuthKey: authKey,
  signingSecret: secret,
  seen: createReplayCache(),
  ...extra,
});

/** The named examples of a webhook of the contract. */
function webhookExamples(gen: Generation, name: string): Record<string, Json> {
  const doc = loadBundle(gen);
  const body = deref(doc, doc.webhooks[name].post.requestBody);
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries<Json>(body.content['application/json'].examples)) out[k] = deref(doc, v).value;
  return out;
}

let messages = 0;
/** A delivery as the service sends it, signed independently of the client's code. */
function delivery(payload: unknown, options: { timestamp?: number; id?: string; body?: string; key?: string } = {}) {
  const id = options.id ?? `msg_${(++messages).toString(16).padStart(24, '0')}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const body = options.body ?? JSON.stringify(payload);
  const hmac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'));
  const signature = 'v1,' + hmac.update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'service-callback-auth': options.key ?? authKey,
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    } as Record<string, string>,
  };
}

const reason = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: unknown) => (e instanceof CallbackVerificationError ? e.reason : `unexpected ${String(e)}`),
  );

describe('verifyCallback', () => {
  it('signs like the Standard Webhooks reference (its published test vector)', () => {
    expect(signCallback('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('accepts and types every callback example of both generations', async () => {
    const kinds: string[] = [];
    for (const gen of ['current', 'legacy'] as const) {
      for (const [webhook, type] of [
        ['taskCompleted', 'taskCompleted'],
        ['attachmentError', 'attachmentError'],
        ['batchCompleted', 'batchCompleted'],
      ] as const) {
        for (const [name, payload] of Object.entries(webhookExamples(gen, webhook))) {
          const d = delivery(payload);
          const cb = await verifyCallback(d.headers, d.body, base());
          expect(cb.type, `${gen} ${webhook} ${name}`).toBe(type);
          expect(cb.payload).toEqual(payload);
          expect(cb.id).toBe(d.headers['webhook-id']);
          if (cb.type === 'taskCompleted') {
            expect(cb.generation).toBe(gen);
            expect(cb.payload.task.task_id).toBe(cb.payload.task_id);
          }
          kinds.push(`${gen}/${cb.type}`);
        }
      }
    }
    expect(new Set(kinds).size).toBe(6);
  });

  it('accepts a Headers object, a Buffer body and any one of several signatures', async () => {
    const [payload] = Object.values(webhookExamples('current', 'taskCompleted'));
    const d = delivery(payload);
    const headers = new Headers(d.headers);
    headers.set('webhook-signature', `v1,${Buffer.alloc(32).toString('base64')} ${d.headers['webhook-signature']} v2,whatever`);
    const cb = await verifyCallback(headers, Buffer.from(d.body), base());
    expect(cb.type).toBe('taskCompleted');
  });

  it('accepts the new or the old secret and auth key while they are rotated', async () => {
    const [payload] = Object.values(webhookExamples('current', 'batchCompleted'));
    const d = delivery(payload);
    const rotating = base({
      signingSecret: ['whsec_' + randomBytes(32).toString('base64'), secret],
      callbackAuthKey: ['cbauth_new', authKey],
    });
    expect((await verifyCallback(d.headers, d.body, rotating)).type).toBe('batchCompleted');
  });

  it('rejects a tampered body', async () => {
    const [payload] = Object.values(webhookExamples('current', 'taskCompleted'));
    const d = delivery(payload);
    const tampered = d.body.replace('"Billing"', '"Support"');
    expect(tampered).not.toBe(d.body);
    expect(await reason(verifyCallback(d.headers, tampered, base()))).toBe('bad_signature');
    expect(await reason(verifyCallback(d.headers, d.body + ' ', base()))).toBe('bad_signature');
    expect(await reason(verifyCallback({ ...d.headers, 'webhook-id': 'msg_other' }, d.body, base()))).toBe('bad_signature');
    expect(await reason(verifyCallback(d.headers, d.body, base({ signingSecret: 'whsec_' + randomBytes(32).toString('base64') })))).toBe(
      'bad_signature',
    );
  });

  it('rejects a wrong or missing callback auth key', async () => {
    const [payload] = Object.values(webhookExamples('current', 'taskCompleted'));
    const d = delivery(payload, { key: authKey + 'x' });
    expect(await reason(verifyCallback(d.headers, d.body, base()))).toBe('bad_auth');
    const { 'service-callback-auth': _, ...without } = delivery(payload).headers;
    expect(await reason(verifyCallback(without, d.body, base()))).toBe('bad_auth');
  });

  it('rejects a stale or future timestamp, within a configurable tolerance', async () => {
    const [payload] = Object.values(webhookExamples('current', 'taskCompleted'));
    const now = Math.floor(Date.now() / 1000);
    const stale = delivery(payload, { timestamp: now - 301 });
    expect(await reason(verifyCallback(stale.headers, stale.body, base()))).toBe('bad_timestamp');
    const future = delivery(payload, { timestamp: now + 301 });
    expect(await reason(verifyCallback(future.headers, future.body, base()))).toBe('bad_timestamp');
    expect(await reason(verifyCallback(stale.headers, stale.body, base({ toleranceSeconds: 600 })))).toBe('accepted');
    const recent = delivery(payload, { timestamp: now - 200 });
    expect(await reason(verifyCallback(recent.headers, recent.body, base()))).toBe('accepted');
  });

  it('rejects a replayed webhook-id, also with a fresh timestamp and signature', async () => {
    const [payload] = Object.values(webhookExamples('current', 'taskCompleted'));
    const options = base();
    const first = delivery(payload, { id: 'msg_65f1c0a2b3c4d5e6f7a8b9d1' });
    expect(await reason(verifyCallback(first.headers, first.body, options))).toBe('accepted');
    expect(await reason(verifyCallback(first.headers, first.body, options))).toBe('replayed');
    const retry = delivery(payload, { id: 'msg_65f1c0a2b3c4d5e6f7a8b9d1', timestamp: Math.floor(Date.now() / 1000) + 1 });
    expect(await reason(verifyCallback(retry.headers, retry.body, options))).toBe('replayed');
    expect(await reason(verifyCallback(first.headers, first.body, { ...options, seen: false }))).toBe('accepted');
    // A forged message does not reach the store: the genuine one is still accepted afterwards.
    const fresh = base();
    const genuine = delivery(payload);
    expect(await reason(verifyCallback(genuine.headers, genuine.body + 'x', fresh))).toBe('bad_signature');
    expect(await reason(verifyCallback(genuine.headers, genuine.body, fresh))).toBe('accepted');
  });

  it('rejects missing webhook headers and signed bodies that are not callbacks', async () => {
    const d = delivery({ hello: 'world' });
    expect(await reason(verifyCallback(d.headers, d.body, base()))).toBe('bad_payload');
    const notJson = delivery(null, { body: 'not json' });
    expect(await reason(verifyCallback(notJson.headers, notJson.body, base()))).toBe('bad_payload');
    const { 'webhook-signature': _, ...unsigned } = d.headers;
    expect(await reason(verifyCallback(unsigned, d.body, base()))).toBe('missing_headers');
  });

  it('keeps the replay cache bounded', async () => {
    const cache = createReplayCache({ max: 2 });
    expect([await cache.seen('a'), await cache.seen('b'), await cache.seen('a'), await cache.seen('c')]).toEqual([
      false,
      false,
      true,
      false,
    ]);
    expect(await cache.seen('b')).toBe(false); // the least recently used one was dropped
    expect(await cache.seen('a')).toBe(false);
  });
});

describe('callbackMiddleware', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });
  async function listen(handler: Parameters<typeof createServer>[1] | express.Express): Promise<string> {
    server = createServer(handler as Parameters<typeof createServer>[1]);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}/callbacks`;
  }
  const post = (url: string, d: { headers: Record<string, string>; body: string }) =>
    fetch(url, { method: 'POST', headers: d.headers, body: d.body });

  it('on node:http: hands verified payloads to the handler, 401 for bad ones, 200 once more for a duplicate', async () => {
    const received: VerifiedCallback[] = [];
    const url = await listen(callbackMiddleware(base(), (cb) => void received.push(cb)));
    const [payload] = Object.values(webhookExamples('legacy', 'taskCompleted'));
    const d = delivery(payload);

    const ok = await post(url, d);
    expect(ok.status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ type: 'taskCompleted', generation: 'legacy', payload });

    const again = await post(url, d); // the service's retry after a lost 2xx
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ received: true, duplicate: true });
    expect(received).toHaveLength(1);

    const tampered = await post(url, { ...d, body: d.body.replace('Billing', 'Support') });
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toMatchObject({ status_code: 401 });
    const wrongKey = await post(url, delivery(payload, { key: 'cbauth_wrong' }));
    expect(wrongKey.status).toBe(401);
    const stale = await post(url, delivery(payload, { timestamp: Math.floor(Date.now() / 1000) - 3600 }));
    expect(stale.status).toBe(401);
    expect(received).toHaveLength(1);
  });

  it('forgets a message whose handler failed, so that the retry is processed', async () => {
    let calls = 0;
    const url = await listen(
      callbackMiddleware(base(), () => {
        if (++calls === 1) throw new Error('database down');
      }),
    );
    const [payload] = Object.values(webhookExamples('current', 'attachmentError'));
    const d = delivery(payload);
    expect((await post(url, d)).status).toBe(500);
    expect((await post(url, d)).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('on Express: with express.raw(), without a body parser, and refuses a body already parsed as JSON', async () => {
    const received: string[] = [];
    const options = base();
    const app = express();
    app.post(
      '/raw/callbacks',
      express.raw({ type: '*/*' }),
      callbackMiddleware(options, (cb) => void received.push(cb.type)),
    );
    app.post(
      '/plain/callbacks',
      callbackMiddleware(options, (cb) => void received.push(cb.type)),
    );
    app.post(
      '/json/callbacks',
      express.json(),
      callbackMiddleware(options, (cb) => void received.push(cb.type)),
    );
    const url = await listen(app);
    const [payload] = Object.values(webhookExamples('current', 'batchCompleted'));
    expect((await post(url.replace('/callbacks', '/raw/callbacks'), delivery(payload))).status).toBe(200);
    expect((await post(url.replace('/callbacks', '/plain/callbacks'), delivery(payload))).status).toBe(200);
    expect((await post(url.replace('/callbacks', '/json/callbacks'), delivery(payload))).status).toBe(500);
    expect((await post(url.replace('/callbacks', '/raw/callbacks'), { ...delivery(payload), body: '{}' })).status).toBe(401);
    expect(received).toEqual(['batchCompleted', 'batchCompleted']);
  });

  it('answers 413 for a body over the limit', async () => {
    const url = await listen(callbackMiddleware(base({ maxBodyBytes: 100 }), () => undefined));
    const res = await post(url, delivery({ error: 'x'.repeat(200), attachments: [] }));
    expect(res.status).toBe(413);
  });
});
