// Storage integrity of the workforce (issue 18), on PGlite and PostgreSQL: every column that names a
// worker (assignments, the redo reservation of task_work, work_events; sessions, tokens and
// credentials already) references workers, so the database itself refuses a row for a worker that
// does not exist, and refuses to delete a worker that has history. Removing a worker is a soft
// delete (status `removed`): its record, assignments and events stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { bearer, createWorker } from '../support/workers.ts';

const FOREIGN_KEY_VIOLATION = '23503';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('worker references on %s', (db) => {
  let server: TestServer;
  let accountId: string;
  let taskId: string;
  let workerId: string;
  let assignmentId: string;
  let current: ReturnType<typeof client>;

  const sql = (text: string, values: unknown[]) => server.store.execute({ name: `integrity_${db}_${text.length}`, text, values });

  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' });
    const secrets = await createAccount(server.uow, `integrity-${db}`, new Date());
    accountId = secrets.account_id;
    current = client(server, 'current', secrets.live_key);
    const created = await current('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 'a cat',
        categories: ['cat', 'dog'],
      },
    });
    expect(created.status, created.text).toBe(200);
    taskId = created.body.task_id;
    const w = await createWorker(server, { accountId });
    workerId = w.workerId;
    const next = await fetch(`${server.url}/worker/v1/assignments/next`, {
      method: 'POST',
      headers: { ...bearer(w.token), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(next.status).toBe(200);
    assignmentId = ((await next.json()) as { assignment_id: string }).assignment_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses an assignment of a worker that does not exist', async () => {
    const now = new Date();
    const insert = (worker: string, id: string) =>
      sql(
        `INSERT INTO assignments (assignment_id, task_id, account_id, worker_id, role, status, lease_token, issued_at, lease_expires_at, hard_deadline)
         VALUES ($1, $2, $3, $4, 'review', 'expired', 'lt_x', $5, $5, $5)`,
        [id, taskId, accountId, worker, now],
      );
    await expect(insert('wkr_000000000000000000000000', 'asg_00000000000000000000000a')).rejects.toMatchObject({
      code: FOREIGN_KEY_VIOLATION,
    });
    // The same row for a real worker is stored: only the worker reference was wrong.
    await insert(workerId, 'asg_00000000000000000000000b');
  });

  it('refuses a work event of a worker that does not exist (events without a worker stay allowed)', async () => {
    const insert = (worker: string | null) =>
      sql(`INSERT INTO work_events (at, account_id, worker_id, task_id, kind) VALUES ($1, $2, $3, $4, 'issued')`, [
        new Date(),
        accountId,
        worker,
        taskId,
      ]);
    await expect(insert('wkr_000000000000000000000000')).rejects.toMatchObject({ code: FOREIGN_KEY_VIOLATION });
    await insert(null);
    await insert(workerId);
  });

  it('refuses a redo reserved for a worker that does not exist', async () => {
    const reserve = (worker: string) => sql(`UPDATE task_work SET reserved_for = $1 WHERE task_id = $2`, [worker, taskId]);
    await expect(reserve('wkr_000000000000000000000000')).rejects.toMatchObject({ code: FOREIGN_KEY_VIOLATION });
    await reserve(workerId);
  });

  it('refuses to delete a worker with history; removing one keeps the record and what it did', async () => {
    await expect(sql(`DELETE FROM workers WHERE worker_id = $1`, [workerId])).rejects.toMatchObject({ code: FOREIGN_KEY_VIOLATION });
    const removed = await current('DELETE', `/v1/workforce/workers/${workerId}`);
    expect(removed.status, removed.text).toBe(200);
    expect((await server.uow.workers.get(workerId))?.status).toBe('removed');
    const seen = await current('GET', `/v1/task/${taskId}/assignments`);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.docs).toContainEqual(expect.objectContaining({ assignment_id: assignmentId, worker: workerId }));
  });
});
