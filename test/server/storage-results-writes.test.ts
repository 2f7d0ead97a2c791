// Issue 37, responses kept as files (decision record 24), on both databases: the files are written
// outside any transaction, once the task that holds the response is written. A bucket that is slow
// to take them (here an S3 endpoint on loopback that holds each result file's PUT until the test lets
// it go) holds no database connection: the embedded store has one, and every other request would
// wait for it. A worker's submit answers once its files are written; the task links them.
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticResponse } from '../../server/domain/synthetic.ts';
import { basicAuth } from '../support/net.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, workerClient } from '../support/workers.ts';

/** Delivery is off in these tests: no callback is sent. */
const callback_url = 'https://example.com/callbacks';
const video = {
  callback_url,
  instruction: 'Track every vehicle and mark each lane change.',
  attachment: 'https://example.com/videos/drive-7.mp4',
  attachment_type: 'video',
  frame_rate: 2,
  geometries: { box: { objects_to_annotate: ['car', 'truck'] } },
  events_to_annotate: ['lane change'],
};

/** A PUT of a result file that the stalling endpoint holds: its key, and the way to let it through. */
interface HeldPut {
  key: string;
  release(): void;
}

/**
 * An S3 endpoint in front of `target` that passes every request through, except that it holds the
 * PUT of each result file (a key under humantask-results/) until the test releases it.
 */
async function startStallingEndpoint(target: string) {
  const held: HeldPut[] = [];
  const waiters: ((put: HeldPut) => void)[] = [];
  let holding = true;
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const out = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.writeHead(502).end());
    out.end(body);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const key = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
        .split('/')
        .slice(2)
        .join('/');
      if (!holding || req.method !== 'PUT' || !key.startsWith('humantask-results/')) return forward(req, res, body);
      const put = { key, release: () => forward(req, res, body) };
      const waiter = waiters.shift();
      if (waiter) waiter(put);
      else held.push(put);
    });
  });
  // The server's S3 client keeps connections alive: one closed while idle (Node's 5 s) just as a PUT
  // reuses it fails that PUT, whose body cannot be sent again (the file is then kept on the server).
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The next result file PUT that arrives (or has arrived), held. */
    nextPut: () => new Promise<HeldPut>((resolve) => (held.length > 0 ? resolve(held.shift()!) : waiters.push(resolve))),
    /** Lets every held PUT through, and holds none from now on. */
    release: () => {
      holding = false;
      for (const put of held.splice(0)) put.release();
    },
    hold: () => {
      holding = true;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('response files written outside transactions on %s', (db) => {
  let server: TestServer;
  let buckets: TestBucketServer;
  let stalling: Awaited<ReturnType<typeof startStallingEndpoint>>;
  let api: ReturnType<typeof client>;
  let sandbox: ReturnType<typeof client>;
  const objectsOf = async (mode: string, taskId: string) => {
    const listed = await fetch(`${buckets.endpoint}/slow-results?list-type=2&prefix=humantask-results/${mode}/${taskId}/`);
    return [...(await listed.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
  };

  beforeAll(async () => {
    buckets = await startBucketServer(['slow-results']);
    stalling = await startStallingEndpoint(buckets.endpoint);
    server = await startTestServer(db, {
      ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
      WORK_SWEEP_POLL_MS: '0',
      // The held PUT must not end by the client's time limit: the test lets it go.
      STORAGE_TIMEOUT_MS: '600000',
    });
    api = client(server, 'current', server.dev.live_key);
    sandbox = client(server, 'current', server.dev.test_key);
    for (const call of [api, sandbox]) {
      const made = await call('POST', '/v1/storage/connections', {
        json: {
          bucket: 'slow-results',
          endpoint: stalling.endpoint,
          access_key_id: s3Keys.accessKeyId,
          secret_access_key: s3Keys.secretAccessKey,
        },
      });
      expect(made.status, made.text).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.close();
    await stalling?.close();
    await buckets?.close();
  });

  it('answers other requests while a worker’s video answer waits for the bucket, then links the files', async () => {
    const created = await api('POST', '/v1/task/videoplaybackannotation', { json: video });
    expect(created.status, created.text).toBe(200);
    const taskId = created.body.task_id as string;
    const worker = await createWorker(server, { accountId: server.dev.account_id });
    const call = (path: string, json: unknown) => workerClient(server, worker.token)('POST', path, json);
    const next = await call('/v1/assignments/next', {});
    expect(next.status, next.text).toBe(200);
    expect(next.body.task.task_id).toBe(taskId);
    const answer = syntheticResponse('videoplaybackannotation', next.body.task.params, taskId) as Record<string, unknown>;

    const submitting = call(`/v1/assignments/${next.body.assignment_id}/submit`, {
      lease_token: next.body.lease_token,
      active_ms: 1000,
      response: answer,
    });
    const first = await stalling.nextPut();
    expect(first.key).toMatch(new RegExp(`^humantask-results/live/${taskId}/[0-9a-f]{16}/(annotations|events)\\.json$`));

    // The bucket holds the file; the store is free: other requests, reading and writing, answer.
    const listed = await api('GET', '/v1/tasks?limit=5');
    expect(listed.status, listed.text).toBe(200);
    const other = await api('POST', '/v1/task/categorization', {
      json: {
        callback_url,
        instruction: 'Which?',
        attachment: 'https://example.com/a.jpg',
        attachment_type: 'image',
        categories: ['a', 'b'],
      },
    });
    expect(other.status, other.text).toBe(200);
    // The task is completed already; its links lead to the files once they are written.
    const meanwhile = await api('GET', `/v1/task/${taskId}`);
    expect(meanwhile.body.status).toBe('completed');

    first.release();
    (await stalling.nextPut()).release();
    const done = await submitting;
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('submitted');

    const shown = (await api('GET', `/v1/task/${taskId}`)).body;
    for (const file of ['annotations', 'events']) {
      const read = await fetch(shown.response[file].url, { headers: { authorization: basicAuth(server.dev.live_key) } });
      expect(read.status).toBe(200);
      expect(await read.json()).toEqual(answer[file]);
    }
    const keys = (await objectsOf('live', taskId)).map((k) => k.split('/').at(-1));
    expect(keys.sort()).toEqual(['annotations.json', 'events.json']);
  });

  it('links the files of the newer answer when a redo overtakes the write of the first', async () => {
    stalling.hold();
    // Test mode: completed at creation; the creation answers once its files are written.
    const creating = sandbox('POST', '/v1/task/videoplaybackannotation', { json: video });
    const first = await stalling.nextPut();
    const taskId = first.key.split('/')[2]!;
    // Meanwhile the customer rejects the answer: test mode redoes it at once, with another answer.
    const rejecting = sandbox('POST', `/v1/task/${taskId}/audit`, { json: { accepted: false } });
    const redone = await stalling.nextPut();
    expect(redone.key.split('/')[3]).not.toBe(first.key.split('/')[3]);
    // The redo's files are written and recorded first; then the first answer's write ends.
    stalling.release();
    redone.release();
    expect((await rejecting).status).toBe(200);
    first.release();
    expect((await creating).status).toBe(200);

    // The task links the redo's files; the first answer's files were written but are named by no row.
    const shown = (await sandbox('GET', `/v1/task/${taskId}`)).body;
    expect(shown.times_redone).toBe(1);
    const { params } = shown;
    const redo = syntheticResponse('videoplaybackannotation', params, `${taskId}:1`) as Record<string, unknown>;
    const before = syntheticResponse('videoplaybackannotation', params, taskId) as Record<string, unknown>;
    expect(redo.annotations).not.toEqual(before.annotations);
    for (const file of ['annotations', 'events']) {
      const read = await fetch(shown.response[file].url, { headers: { authorization: basicAuth(server.dev.test_key) } });
      expect(read.status).toBe(200);
      expect(await read.json()).toEqual(redo[file]);
    }
    const folders = new Set((await objectsOf('test', taskId)).map((k) => k.split('/')[3]));
    expect(folders).toEqual(new Set([first.key.split('/')[3], redone.key.split('/')[3]]));
  });
});
