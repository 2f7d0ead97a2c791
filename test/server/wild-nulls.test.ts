// Issue 22, rule 1: in a request body, `null` means "not given" (clients built from typed models
// send every optional field), unless the contract types the property as nullable; inside free-form
// objects (`metadata`) a null is data. Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('null means "not given" on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-nulls', new Date());
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(['current', 'legacy'] as const)('%s: a project with params: null is created without a parameter version', async (generation) => {
    const call = client(server, generation, account.live_key);
    const name = `p-${generation}`;
    const res = await call('POST', '/v1/projects', { json: { type: 'imageannotation', name, params: null, rapid: false, studio: false } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ type: 'imageannotation', name, rapid: false, studio: false, param_history: [] });
  });

  it.each(['current', 'legacy'] as const)(
    '%s: a batch and a task with optional fields null get the same answer as without them',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const project = `nulls-${generation}`;
      expect(
        (await call('POST', '/v1/projects', { json: { type: 'categorization', name: project, params: null, rapid: null, studio: null } }))
          .status,
      ).toBe(200);
      const batch = await call('POST', '/v1/batches', {
        json: { project, name: `b-${generation}`, callback: null, calibration_batch: null, self_label_batch: null, metadata: null },
      });
      expect(batch.status, batch.text).toBe(200);
      expect(batch.body).not.toHaveProperty('callback');
      const task = await call('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick one',
          attachment_type: 'text',
          attachment: 'some text',
          categories: ['a', 'b'],
          allow_multiple: null,
          unique_id: null,
          tags: null,
          batch: null,
          project: null,
          metadata: { kept: null, nested: { also: null } },
        },
      });
      expect(task.status, task.text).toBe(200);
      expect(task.body).not.toHaveProperty('unique_id');
      expect(task.body).not.toHaveProperty('batch');
      expect(task.body.metadata).toEqual({ kept: null, nested: { also: null } });
      const stored = await call('GET', `/v1/task/${task.body.task_id}`);
      expect(stored.body.metadata).toEqual({ kept: null, nested: { also: null } });
      const meta = await call('POST', `/v1/task/${task.body.task_id}/setMetadata`, { json: { x: null } });
      expect(meta.status, meta.text).toBe(200);
      expect(meta.body.metadata).toEqual({ x: null });
    },
  );

  it('a property the contract types as nullable keeps its null (max_vertices: null is "no maximum")', async () => {
    const call = client(server, 'current', account.test_key);
    const res = await call('POST', '/v1/task/polygonannotation', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Outline',
        attachment: 'https://example.com/a.jpg',
        objects_to_annotate: ['car'],
        max_vertices: null,
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params).toHaveProperty('max_vertices', null);
  });

  it('a null where the property is required is still refused, naming it', async () => {
    const call = client(server, 'current', account.test_key);
    const res = await call('POST', '/v1/projects', { json: { type: 'categorization', name: null } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('name');
  });
});
