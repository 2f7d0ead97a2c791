// npm run bench:limits: what the limits of issue 31 cost and buy, against a real `humantask serve`
// (embedded PGlite in a throwaway folder, scrypt at its production cost 15, TRUSTED_PROXIES=loopback
// so that X-Forwarded-For stands for distinct client addresses):
// - a genuine worker's log-in from one address, alone and while 60 failed log-ins from another
//   address are in flight (issue 31 measured 0.9 s -> 25 s before the hashing gate);
// - an account's worker creation while another account creates 40 at once (20.6 s before);
// - another tenant's requests (median, p90) alone and while one worker sends maximal heartbeats (a
//   draft just under 1 MB) back to back on 4 connections (p90 3.8 s before, with 9 MB drafts):
//   past the first 10, the large-heartbeat limit refuses them (429) before reading them;
// - how soon a heartbeat announcing 9 MB is refused (413) when only its head was sent.
// Writes bench/results/limits-<date>.json.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keysOf, onCleanup, run, serveChild, spread, textTable, today } from './lib.ts';

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

run(async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-bench-limits-'));
  onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await serveChild({
    DATA_DIR: path.join(dataDir, 'data'),
    LOG_LEVEL: 'silent',
    NODE_ENV: 'production',
    TRUSTED_PROXIES: '127.0.0.1/32',
    // The production settings (serve() turns the limits off for tests).
    WORKER_PASSWORD_COST: '15',
    AUTH_FAILURE_BURST: '100',
    WORKER_LOGIN_FAILURE_BURST: '10',
    WORKER_PASSWORD_PER_CLIENT: '4',
    WORKER_PASSWORD_QUEUE: '32',
  });
  const keys = keysOf(server.output());
  const url = server.url;

  const createWorker = async (key: string, email: string) => {
    const res = await fetch(`${url}/v1/workforce/workers`, {
      method: 'POST',
      headers: { authorization: basic(key), 'content-type': 'application/json' },
      body: JSON.stringify({ email, display_name: email.split('@')[0], roles: ['labeler'] }),
    });
    return { status: res.status, body: (await res.json()) as { worker_id: string; initial_password: string } };
  };
  const logIn = async (email: string, password: string, address: string) => {
    const res = await fetch(`${url}/worker/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ email, password }),
    });
    return { status: res.status, body: (await res.json()) as { token: string } };
  };

  // ---- log-ins under a flood ----------------------------------------------------------------
  const ana = (await createWorker(keys.live, 'ana@example.com')).body;
  const alone: number[] = [];
  for (let i = 0; i < 5; i++) alone.push((await timed(() => logIn('ana@example.com', ana.initial_password, '198.51.100.1'))).ms);
  const flooded: number[] = [];
  const floodStatuses: Record<number, number> = {};
  for (let round = 0; round < 3; round++) {
    const flood = Array.from({ length: 60 }, (_, i) =>
      logIn(`nobody-${round}-${i}@example.com`, 'wrong-password-1', `203.0.113.${round + 1}`),
    );
    const genuine = await timed(() => logIn('ana@example.com', ana.initial_password, '198.51.100.1'));
    if (genuine.value.status !== 200) throw new Error(`the genuine log-in answered ${genuine.value.status}`);
    flooded.push(genuine.ms);
    for (const a of await Promise.all(flood)) floodStatuses[a.status] = (floodStatuses[a.status] ?? 0) + 1;
  }

  // ---- worker creations ---------------------------------------------------------------------
  const creationAlone = (await timed(() => createWorker(keys.test, 'solo@example.com'))).ms;
  const bulk = Array.from({ length: 40 }, (_, i) => createWorker(keys.live, `bulk-${i}@example.com`));
  const creationBeside = await timed(() => createWorker(keys.test, 'beside@example.com'));
  const bulkStatuses: Record<number, number> = {};
  for (const b of await Promise.all(bulk)) bulkStatuses[b.status] = (bulkStatuses[b.status] ?? 0) + 1;

  // ---- another tenant beside maximal heartbeats ----------------------------------------------
  const token = (await logIn('ana@example.com', ana.initial_password, '198.51.100.1')).body.token;
  const live = { authorization: basic(keys.live), 'content-type': 'application/json' };
  await fetch(`${url}/v1/task/categorization`, {
    method: 'POST',
    headers: live,
    body: JSON.stringify({
      callback_url: 'https://example.com/cb',
      instruction: 'Pick',
      attachment_type: 'text',
      attachment: 'x',
      categories: ['a', 'b'],
    }),
  });
  const claimed = (await (
    await fetch(`${url}/worker/v1/assignments/next`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    })
  ).json()) as { assignment_id: string; lease_token: string };
  const other = { authorization: basic(keys.test) };
  const tenantLatencies = async (n: number) => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++)
      ms.push((await timed(() => fetch(`${url}/v1/tasks?limit=10`, { headers: other }).then((r) => r.text()))).ms);
    return ms;
  };
  const quiet = await tenantLatencies(100);
  const heartbeat = JSON.stringify({ lease_token: claimed.lease_token, active_ms: 10, draft: { blob: 'x'.repeat(1_040_000) } });
  let beating = true;
  const beats: Record<number, number> = {};
  const beaters = Array.from({ length: 4 }, async () => {
    while (beating) {
      const res = await fetch(`${url}/worker/v1/assignments/${claimed.assignment_id}/heartbeat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: heartbeat,
      });
      await res.text();
      beats[res.status] = (beats[res.status] ?? 0) + 1;
    }
  });
  const busy = await tenantLatencies(100);
  beating = false;
  await Promise.all(beaters);

  // ---- a 9 MB heartbeat's head ------------------------------------------------------------------
  const { hostname, port } = new URL(url);
  const refusal = await timed(
    () =>
      new Promise<number>((resolve, reject) => {
        const socket = connect(Number(port), hostname);
        socket.once('data', (chunk) => {
          socket.destroy();
          resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(String(chunk))?.[1]));
        });
        socket.on('error', reject);
        socket.write(
          `POST /worker/v1/assignments/${claimed.assignment_id}/heartbeat HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: ${9 * 1024 * 1024}\r\n\r\n{"lease_token":`,
        );
      }),
  );

  const results = {
    date: today(),
    settings: { password_cost: 15, password_concurrency: 2, password_queue: 32, password_per_client: 4, draft_bytes: 1_040_000 },
    login_ms: { alone: spread(alone), beside_60_failed_from_another_address: spread(flooded), flood_statuses: floodStatuses },
    worker_creation_ms: { alone: creationAlone, beside_40_of_another_account: creationBeside.ms, bulk_statuses: bulkStatuses },
    other_tenant_ms: { quiet: spread(quiet), beside_maximal_heartbeats: spread(busy), heartbeats_meanwhile: beats },
    nine_mb_heartbeat: { status: refusal.value, ms: refusal.ms },
  };
  const file = path.join(import.meta.dirname, 'results', `limits-${results.date}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const f = (n: number) => n.toFixed(0);
  console.log(
    textTable([
      ['what', 'median ms', 'p90 ms'],
      ['genuine log-in, alone', f(results.login_ms.alone.median), f(results.login_ms.alone.p90)],
      [
        'genuine log-in, 60 failed from another address',
        f(results.login_ms.beside_60_failed_from_another_address.median),
        f(results.login_ms.beside_60_failed_from_another_address.p90),
      ],
      ['worker creation, alone', f(creationAlone), ''],
      ['worker creation, beside 40 of another account', f(creationBeside.ms), ''],
      ['other tenant GET /v1/tasks, quiet', f(results.other_tenant_ms.quiet.median), f(results.other_tenant_ms.quiet.p90)],
      [
        'other tenant GET /v1/tasks, beside 1 MB heartbeats',
        f(results.other_tenant_ms.beside_maximal_heartbeats.median),
        f(results.other_tenant_ms.beside_maximal_heartbeats.p90),
      ],
      ['9 MB heartbeat head: 413 after', f(refusal.ms), ''],
    ]),
  );
  console.log(
    `flood answers ${JSON.stringify(floodStatuses)}, bulk creations ${JSON.stringify(bulkStatuses)}, heartbeats meanwhile ${JSON.stringify(beats)}; ${file}`,
  );
  return 0;
});
