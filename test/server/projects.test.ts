// Projects (parameter versions, the merge rule, ontologies) and batches (lifecycle, joining rules,
// completion and its queued callback), over HTTP, on PGlite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('projects and batches on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let live: ReturnType<typeof client>;
  let test: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'projects', new Date());
    live = client(server, 'current', account.live_key);
    test = client(server, 'current', account.test_key);
    const created = await live('POST', '/v1/projects', {
      json: {
        type: 'categorization',
        name: 'tickets',
        params: { attachment_type: 'text', categories: ['a', 'b'], instruction: 'Project text', unknown: 1 },
      },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.param_history).toEqual([
      { version: 0, created_at: expect.any(String), attachment_type: 'text', categories: ['a', 'b'], instruction: 'Project text' },
    ]);
    const v1 = await live('POST', '/v1/projects/tickets/setParams', { json: { categories: ['x', 'y'] } });
    expect(v1.body.paramHistory.map((v: { version: number }) => v.version)).toEqual([0, 1]);
    expect(v1.body.paramHistory[1]).not.toHaveProperty('attachment_type');
    const v2 = await live('POST', '/v1/projects/tickets/setParams', {
      json: { patch: true, attachment_type: 'text', instruction: 'Project text' },
    });
    expect(v2.body.paramHistory[2]).toMatchObject({
      version: 2,
      categories: ['x', 'y'],
      attachment_type: 'text',
      instruction: 'Project text',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const cb = 'https://example.com/cb';
  it.each([
    [
      'task-only (no project)',
      { callback_url: cb, instruction: 'Task text', attachment_type: 'text', attachment: 't', categories: ['c'] },
      { attachment_type: 'text', attachment: 't', categories: ['c'] },
      'Task text',
      undefined,
    ],
    [
      'project-only (latest version)',
      { callback_url: cb, project: 'tickets', attachment: 't' },
      { attachment_type: 'text', attachment: 't', categories: ['x', 'y'] },
      'Project text',
      2,
    ],
    [
      'hybrid: the task overrides',
      { callback_url: cb, project: 'tickets', attachment: 't', categories: ['mine'], instruction: 'Task text' },
      { attachment_type: 'text', attachment: 't', categories: ['mine'] },
      'Project text\n\nTask text',
      2,
    ],
    [
      'a pinned older version',
      { callback_url: cb, project: 'tickets', project_param_version: 0, attachment: 't' },
      { attachment_type: 'text', attachment: 't', categories: ['a', 'b'] },
      'Project text',
      0,
    ],
  ] as const)('merge rule, %s', async (_case, body, params, instruction, version) => {
    const res = await live('POST', '/v1/task/categorization', { json: body });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params).toEqual(params);
    expect(res.body.instruction).toBe(instruction);
    if (version === undefined) expect(res.body).not.toHaveProperty('project_param_version');
    else expect(res.body).toMatchObject({ project: 'tickets', project_param_version: version });
    const stored = await live('GET', `/v1/task/${res.body.task_id}`);
    expect(stored.body.params).toEqual(params);
  });

  it('merge rule: what neither the task nor the project gives is still required; type and version must fit', async () => {
    await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'bare', params: { attachment_type: 'text' } } });
    const missing = await live('POST', '/v1/task/categorization', { json: { callback_url: cb, project: 'bare', attachment: 't' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/categories|instruction/);
    const mismatch = await live('POST', '/v1/task/annotation', {
      json: { callback_url: cb, project: 'tickets', attachment: 'https://example.com/a.jpg' },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toContain('categorization project');
    const version = await live('POST', '/v1/task/categorization', {
      json: { callback_url: cb, project: 'tickets', project_param_version: 9, attachment: 't' },
    });
    expect(version.status).toBe(400);
    expect(version.body.error).toContain('project_param_version');
    expect((await live('POST', '/v1/task/categorization', { json: { callback_url: cb, project: 'nope', attachment: 't' } })).status).toBe(
      404,
    );
    await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'versionless' } });
    const none = await live('POST', '/v1/task/categorization', {
      json: { callback_url: cb, project: 'versionless', attachment: 't', attachment_type: 'text', categories: ['a'], instruction: 'i' },
    });
    expect(none.status, none.text).toBe(200);
    expect(none.body.project_param_version).toBeNull();
    expect((await live('GET', '/v1/tasks?project=versionless')).body.total).toBe(1);
  });

  it('keeps every ontology version queryable, and refuses a duplicate choice at depth 2 without a new version', async () => {
    await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'onto' } });
    for (const [i, ontology] of [
      ['car', 'truck'],
      ['car', { choice: 'vehicle', subchoices: ['bus', 'tram'] }],
      [{ choice: 'thing', subchoices: ['x'] }],
    ].entries()) {
      const res = await live('POST', '/v1/projects/onto/setOntology', { json: { ontology, name: `v${i}` } });
      expect(res.status, res.text).toBe(200);
    }
    const dup = await live('POST', '/v1/projects/onto/setOntology', {
      json: { ontology: ['car', { choice: 'vehicle', subchoices: ['bus', 'car'] }] },
    });
    expect(dup.status).toBe(400);
    expect(dup.body.error).toContain('"car"');
    const project = await live('GET', '/v1/projects/onto');
    expect(project.body.ontologyHistory.map((v: { version: number; name: string }) => [v.version, v.name])).toEqual([
      [0, 'v0'],
      [1, 'v1'],
      [2, 'v2'],
    ]);
    expect(project.body.ontologyHistory[1].ontology).toEqual(['car', { choice: 'vehicle', subchoices: ['bus', 'tram'] }]);
  });

  it('runs a studio batch: staging → finalize → in_progress → last task done → completed, callback queued once', async () => {
    await live('POST', '/v1/projects', {
      json: {
        type: 'categorization',
        name: 'studio-p',
        studio: true,
        params: { attachment_type: 'text', categories: ['a'], instruction: 'i' },
      },
    });
    const batch = await live('POST', '/v1/batches', { json: { project: 'studio-p', name: 'b1', callback: 'https://example.com/batch' } });
    expect(batch.body).toMatchObject({ name: 'b1', project: 'studio-p', status: 'staging', calibration_batch: false });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await live('POST', '/v1/task/categorization', { json: { callback_url: cb, batch: 'b1', attachment: `t${i}` } })).body.task_id,
      );
    expect((await live('GET', `/v1/task/${ids[0]}`)).body).toMatchObject({ batch: 'b1', project: 'studio-p' });
    expect((await live('GET', '/v1/batches/b1/status')).body).toEqual({
      status: 'staging',
      pending: 3,
      completed: 0,
      error: 0,
      canceled: 0,
    });
    expect((await live('POST', '/v1/batches/b1/finalize')).body.status).toBe('in_progress');
    expect((await live('POST', '/v1/batches/b1/finalize')).body.status).toBe('in_progress');
    const late = await live('POST', '/v1/task/categorization', { json: { callback_url: cb, batch: 'b1', attachment: 'late' } });
    expect(late.status).toBe(400);
    expect(late.body.error).toContain('finalized');
    await live('POST', `/v1/task/${ids[0]}/cancel`);
    expect((await live('GET', '/v1/batches/b1/status')).body).toEqual({
      status: 'in_progress',
      pending: 2,
      completed: 0,
      error: 0,
      canceled: 1,
    });
    // The last two tasks finish at once: the batch completes, and its callback is queued, once.
    await Promise.all(ids.slice(1).map((id) => live('POST', `/v1/task/${id}/cancel`)));
    expect((await live('GET', '/v1/batches/b1/status')).body).toEqual({
      status: 'completed',
      pending: 0,
      completed: 0,
      error: 0,
      canceled: 3,
    });
    const queued = await server.uow.outbox.forSubject(account.account_id, 'b1');
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({
      event: 'batch_completed',
      url: 'https://example.com/batch',
      payload: { batch: { name: 'b1', status: 'completed' }, counts: { completed: 0, canceled: 3, error: 0 } },
    });
    expect((await live('GET', '/v1/batches/b1')).body).toMatchObject({ status: 'completed', completed_at: expect.any(String) });
    expect((await live('POST', '/v1/task/categorization', { json: { callback_url: cb, batch: 'b1', attachment: 'x' } })).status).toBe(400);
  });

  it('completes an enterprise batch in test mode as its tasks complete; project must match the batch', async () => {
    await test('POST', '/v1/projects', {
      json: { type: 'categorization', name: 'ent', params: { attachment_type: 'text', categories: ['a'], instruction: 'i' } },
    });
    expect((await test('POST', '/v1/batches', { json: { project: 'ent', name: 'e1' } })).body.status).toBe('in_progress');
    await test('POST', '/v1/projects', { json: { type: 'categorization', name: 'ent2' } });
    const wrong = await test('POST', '/v1/task/categorization', {
      json: { callback_url: cb, batch: 'e1', project: 'ent2', attachment: 't' },
    });
    expect(wrong.status).toBe(400);
    const t = await test('POST', '/v1/task/categorization', { json: { callback_url: cb, batch: 'e1', attachment: 't' } });
    expect(t.status, t.text).toBe(200);
    expect((await test('GET', '/v1/batches/e1/status')).body).toEqual({
      status: 'completed',
      pending: 0,
      completed: 1,
      error: 0,
      canceled: 0,
    });
    // No callback address on the batch: nothing queued.
    expect(await server.uow.outbox.forSubject(account.account_id, 'e1')).toEqual([]);
    const list = await test('GET', '/v1/batches?project=ent&limit=10');
    expect(list.body).toMatchObject({ total: 1, totalDocs: 1, limit: 10, offset: 0, has_more: false, docs: [{ name: 'e1' }] });
  });

  it('refuses to finalize a rapid production batch before a calibration batch completed', async () => {
    await live('POST', '/v1/projects', {
      json: {
        type: 'categorization',
        name: 'rapid-p',
        rapid: true,
        params: { attachment_type: 'text', categories: ['a'], instruction: 'i' },
      },
    });
    await live('POST', '/v1/batches', { json: { project: 'rapid-p', name: 'prod' } });
    await live('POST', '/v1/batches', { json: { project: 'rapid-p', name: 'calib', calibration_batch: true } });
    const early = await live('POST', '/v1/batches/prod/finalize');
    expect(early.status).toBe(400);
    expect(early.body.error).toContain('calibration');
    const t = await live('POST', '/v1/task/categorization', { json: { callback_url: cb, batch: 'calib', attachment: 't' } });
    expect((await live('POST', '/v1/batches/calib/finalize')).body.status).toBe('in_progress');
    await live('POST', `/v1/task/${t.body.task_id}/cancel`);
    expect((await live('GET', '/v1/batches/calib')).body.status).toBe('completed');
    expect((await live('POST', '/v1/batches/prod/finalize')).body.status).toBe('in_progress');
  });

  it('keeps projects and batches apart per account and mode (404, absent from lists)', async () => {
    const stranger = client(server, 'current', server.dev.live_key);
    for (const who of [stranger, test]) {
      expect((await who('GET', '/v1/projects/tickets')).status).toBe(404);
      expect((await who('POST', '/v1/projects/tickets/setParams', { json: { categories: ['z'] } })).status).toBe(404);
      expect((await who('GET', '/v1/batches/b1')).status).toBe(404);
      expect((await who('GET', '/v1/batches/b1/status')).status).toBe(404);
      expect((await who('POST', '/v1/batches/b1/finalize')).status).toBe(404);
      expect((await who('GET', '/v1/projects')).body.map((p: { name: string }) => p.name)).not.toContain('tickets');
      expect((await who('GET', '/v1/batches')).body.docs.map((b: { name: string }) => b.name)).not.toContain('b1');
    }
    // The same names are free in another account.
    expect((await stranger('POST', '/v1/projects', { json: { type: 'annotation', name: 'tickets' } })).status).toBe(200);
  });

  it('answers bad input with 400 (or 404/409) naming the problem, and stores nothing', async () => {
    const before = (await live('GET', '/v1/projects')).body.length;
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization' } })).body.error).toContain('name');
    expect((await live('POST', '/v1/projects', { json: { type: 'hologram', name: 'h' } })).status).toBe(400);
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'tickets' } })).status).toBe(409);
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'both', rapid: true, studio: true } })).status).toBe(
      400,
    );
    // A parameter that is no valid value for the type: named, and no project or version stored.
    const badParams = await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'bad', params: { categories: 'stop' } } });
    expect(badParams.status).toBe(400);
    expect(badParams.body.error).toBe('params.categories must be array');
    expect((await live('GET', '/v1/projects')).body.length).toBe(before);
    const versions = (await live('GET', '/v1/projects/tickets')).body.param_history.length;
    const badVersion = await live('POST', '/v1/projects/tickets/setParams', { json: { patch: true, categories: ['a', 'a'] } });
    expect(badVersion.status).toBe(400);
    expect(badVersion.body.error).toContain('categories');
    expect((await live('GET', '/v1/projects/tickets')).body.param_history).toHaveLength(versions);
    // None is required, and numbers may come as the strings a form sends.
    expect((await live('POST', '/v1/projects/tickets/setParams', { json: { patch: true, allow_multiple: 'true' } })).status).toBe(200);
    expect((await live('POST', '/v1/projects/tickets/setOntology', { json: { ontology: [] } })).status).toBe(400);
    expect((await live('POST', '/v1/batches', { json: { project: 'nope', name: 'x' } })).status).toBe(404);
    expect((await live('POST', '/v1/batches', { json: { project: 'tickets', name: 'cal', calibration_batch: true } })).status).toBe(400);
    expect((await live('POST', '/v1/batches', { json: { name: 'x' } })).body.error).toContain('project');
    expect((await live('GET', '/v1/batches/cal')).status).toBe(404);
  });
});
