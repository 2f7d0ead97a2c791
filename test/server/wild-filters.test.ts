// Issue 22, rule 4: the list filters and flags clients of the real service send are understood:
// on GET /v1/tasks `created_after`/`created_before`, `include_attachment_url`, `limited_response`;
// on GET /v1/batches `exclude_archived`, with POST .../archive and .../unarchive and the `archived`
// flag; an unknown parameter stays a 400 naming it. Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('filters clients send on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let imageTask: { task_id: string; created_at: string };
  let textTask: { task_id: string; created_at: string };

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-filters', new Date());
    const call = client(server, 'current', account.test_key);
    expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: 'vehicles' } })).status).toBe(200);
    const image = await call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'image',
        attachment: 'https://example.com/a.jpg',
        categories: ['a', 'b'],
        project: 'vehicles',
        metadata: { k: 1 },
      },
    });
    expect(image.status, image.text).toBe(200);
    imageTask = image.body;
    const text = await call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 'plain words',
        categories: ['a', 'b'],
      },
    });
    expect(text.status, text.text).toBe(200);
    textTask = text.body;
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(['current', 'legacy'] as const)(
    '%s: created_after/created_before bound created_at like start_time/end_time',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const both = await call(
        'GET',
        `/v1/tasks?created_after=${encodeURIComponent(imageTask.created_at)}&created_before=${encodeURIComponent(textTask.created_at)}`,
      );
      expect(both.status, both.text).toBe(200);
      expect(both.body.docs.map((t: { task_id: string }) => t.task_id)).toEqual([textTask.task_id, imageTask.task_id]);
      const onlyText = await call('GET', `/v1/tasks?created_after=${encodeURIComponent(textTask.created_at)}`);
      expect(onlyText.body.docs.map((t: { task_id: string }) => t.task_id)).toEqual([textTask.task_id]);
      // Both names given: both bounds apply.
      const none = await call(
        'GET',
        `/v1/tasks?start_time=${encodeURIComponent(textTask.created_at)}&created_before=${encodeURIComponent(imageTask.created_at)}`,
      );
      expect(none.body.total).toBe(textTask.created_at === imageTask.created_at ? 2 : 0);
    },
  );

  it.each(['current', 'legacy'] as const)(
    '%s: include_attachment_url adds the URL of a URL attachment, and nothing for text',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const res = await call('GET', '/v1/tasks?include_attachment_url=true');
      expect(res.status, res.text).toBe(200);
      const byId = new Map(res.body.docs.map((t: { task_id: string }) => [t.task_id, t]));
      expect(byId.get(imageTask.task_id)).toMatchObject({
        attachment_url: 'https://example.com/a.jpg',
        params: { attachment: 'https://example.com/a.jpg' },
      });
      expect(byId.get(textTask.task_id)).not.toHaveProperty('attachment_url');
      const without = await call('GET', '/v1/tasks?include_attachment_url=FALSE');
      expect(without.body.docs.every((t: object) => !('attachment_url' in t))).toBe(true);
    },
  );

  it('text that reads like a URL is text: no attachment_url, in either generation', async () => {
    // An account of its own, so that the other cases' lists stay as they are.
    const own = await createAccount(server.uow, 'wild-filters-text', new Date());
    const created = await client(server, 'current', own.test_key)('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 'https://example.com/b.jpg',
        categories: ['a', 'b'],
      },
    });
    expect(created.status, created.text).toBe(200);
    for (const generation of ['current', 'legacy'] as const) {
      const res = await client(server, generation, own.test_key)('GET', '/v1/tasks?include_attachment_url=true');
      expect(res.status, res.text).toBe(200);
      expect(res.body.docs).toHaveLength(1);
      expect(res.body.docs[0]).toMatchObject({
        task_id: created.body.task_id,
        params: { attachment_type: 'text', attachment: 'https://example.com/b.jpg' },
      });
      expect(res.body.docs[0]).not.toHaveProperty('attachment_url');
    }
  });

  it.each(['current', 'legacy'] as const)('%s: limited_response gives task_id, status, metadata and project only', async (generation) => {
    const call = client(server, generation, account.test_key);
    const res = await call('GET', '/v1/tasks?limited_response=true');
    expect(res.status, res.text).toBe(200);
    expect(res.body.docs).toEqual([
      { task_id: textTask.task_id, status: 'completed', metadata: {} },
      { task_id: imageTask.task_id, status: 'completed', metadata: { k: 1 }, project: 'vehicles' },
    ]);
    const withUrl = await call('GET', '/v1/tasks?limited_response=True&include_attachment_url=true&project=vehicles');
    expect(withUrl.body.docs).toEqual([
      {
        task_id: imageTask.task_id,
        status: 'completed',
        metadata: { k: 1 },
        project: 'vehicles',
        attachment_url: 'https://example.com/a.jpg',
      },
    ]);
  });

  it('the shape flags keep a next_token valid; a bad flag or an unknown parameter is a 400 naming it', async () => {
    const call = client(server, 'current', account.test_key);
    const first = await call('GET', '/v1/tasks?limit=1');
    const second = await call('GET', `/v1/tasks?limit=1&limited_response=true&next_token=${encodeURIComponent(first.body.next_token)}`);
    expect(second.status, second.text).toBe(200);
    expect(second.body.docs).toEqual([{ task_id: imageTask.task_id, status: 'completed', metadata: { k: 1 }, project: 'vehicles' }]);
    const bad = await call('GET', '/v1/tasks?limited_response=yes');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('limited_response');
    const typo = await call('GET', '/v1/tasks?created_afterr=2026-11-21');
    expect(typo.status).toBe(400);
    expect(typo.body.error).toContain('created_afterr');
  });

  it.each(['current', 'legacy'] as const)(
    '%s: batches are archived and unarchived; exclude_archived hides them; an archived batch takes no task',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const name = `archive-${generation}`;
      const created = await call('POST', '/v1/batches', { json: { project: 'vehicles', name } });
      expect(created.status, created.text).toBe(200);
      expect(created.body.archived).toBe(false);
      const archived = await call('POST', `/v1/batches/${name}/archive`);
      expect(archived.status, archived.text).toBe(200);
      expect(archived.body).toMatchObject({ name, archived: true, status: 'in_progress' });
      expect((await call('POST', `/v1/batches/${name}/archive`)).body.archived).toBe(true);
      expect((await call('GET', `/v1/batches/${name}`)).body.archived).toBe(true);
      const all = await call('GET', '/v1/batches?project=vehicles');
      expect(all.body.docs.map((b: { name: string }) => b.name)).toContain(name);
      const visible = await call('GET', '/v1/batches?project=vehicles&exclude_archived=true');
      expect(visible.status, visible.text).toBe(200);
      expect(visible.body.docs.map((b: { name: string }) => b.name)).not.toContain(name);
      expect(visible.body.total).toBe(all.body.total - 1);
      const refused = await call('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          attachment: 'words',
          attachment_type: 'text',
          categories: ['a'],
          instruction: 'Pick',
          batch: name,
        },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain('archived');
      const unarchived = await call('POST', `/v1/batches/${name}/unarchive`);
      expect(unarchived.status, unarchived.text).toBe(200);
      expect(unarchived.body.archived).toBe(false);
      expect(
        (await call('GET', '/v1/batches?project=vehicles&exclude_archived=TRUE')).body.docs.map((b: { name: string }) => b.name),
      ).toContain(name);
      const missing = await call('POST', '/v1/batches/no-such-batch/archive');
      expect(missing.status).toBe(404);
    },
  );
});
