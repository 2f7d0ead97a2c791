// Issue 34: the activity log records every kind of change the issue lists, each read back through
// GET /v1/activity with who made it (a member's session or a scoped key), what it changed, the mode,
// the client address and the request id the client sent. One test per action; both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithOwner, send, type MemberSession } from '../support/members.ts';
import { basicAuth } from '../support/net.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const categorization = {
  callback_url: 'https://example.com/callback',
  instruction: 'Which department should handle this ticket?',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support', 'sales'],
};

describe.each(databases)('the activity log (%s)', (db) => {
  let server: TestServer;
  let bucket: TestBucketServer;
  let owner: MemberSession;
  /** A key with every scope, made by the owner through the API: the actor of the key's changes. */
  let key: { id: string; name: string; secret: string };
  let sent = 0;

  beforeAll(async () => {
    if (db === 'postgres' && !hasPostgres()) return;
    bucket = await startBucketServer(['activity-bucket']);
    server = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
    ({ owner } = await accountWithOwner(server, 'logged'));
    const made = await owner.call('POST', '/v1/api_keys', {
      json: { name: 'pipeline', mode: 'test', scopes: ['tasks:read', 'tasks:write', 'projects:write', 'workforce', 'exports'] },
    });
    expect(made.status, made.text).toBe(200);
    key = { id: made.body.key.key_id, name: 'pipeline', secret: made.body.secret };
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await bucket?.close();
  });

  /** A request by the owner's session (test mode) with a request id of its own. */
  async function byMember(method: string, path: string, json?: unknown, headers: Record<string, string> = {}) {
    const requestId = `activity-${db}-${++sent}`;
    const reply = await owner.call(method, path, {
      ...(json !== undefined ? { json } : {}),
      headers: { 'x-request-id': requestId, ...headers },
    });
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(200);
    return { reply, requestId };
  }

  /** The same through the scoped key. */
  async function byKey(method: string, path: string, json?: unknown) {
    const requestId = `activity-${db}-${++sent}`;
    const reply = await send(server.url + path, method, {
      ...(json !== undefined ? { json } : {}),
      headers: { authorization: basicAuth(key.secret), 'x-request-id': requestId },
    });
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(200);
    return { reply, requestId };
  }

  const ownerActor = () => ({ type: 'member', id: owner.memberId, name: owner.email });
  const keyActor = () => ({ type: 'api_key', id: key.id, name: key.name });

  /** The entry the request with this id wrote, as the owner reads the log (filtered by action). */
  async function entryOf(action: string, requestId: string) {
    const listed = await owner.call('GET', `/v1/activity?action=${action}&limit=100`);
    expect(listed.status, listed.text).toBe(200);
    const found = (listed.body.docs as any[]).filter((e) => e.request_id === requestId);
    expect(found, `one ${action} entry for ${requestId}`).toHaveLength(1);
    return found[0];
  }

  async function expectEntry(
    action: string,
    requestId: string,
    actor: Record<string, string>,
    target: { type: string; id?: string },
    details?: Record<string, unknown>,
    mode: 'test' | 'live' = 'test',
  ) {
    const entry = await entryOf(action, requestId);
    expect(entry).toMatchObject({ action, actor, target, mode, address: '127.0.0.1', request_id: requestId });
    if (details) expect(entry.details).toMatchObject(details);
    return entry;
  }

  const project = `p-${db}`;
  const batch = `b-${db}`;
  let taskId = '';
  let workerId = '';
  let connectionId = '';
  let memberId = '';

  it('member changes: invited, role changed, removed', async () => {
    if (!server) return;
    const invited = await byMember('POST', '/v1/members', { email: `dana-${db}@example.com`, role: 'viewer' });
    memberId = invited.reply.body.member.member_id;
    await expectEntry('member.invited', invited.requestId, ownerActor(), { type: 'member', id: memberId });
    const changed = await byMember('PATCH', `/v1/members/${memberId}`, { role: 'reviewer' });
    await expectEntry('member.updated', changed.requestId, ownerActor(), { type: 'member', id: memberId });
    const removed = await byMember('DELETE', `/v1/members/${memberId}`);
    await expectEntry('member.removed', removed.requestId, ownerActor(), { type: 'member', id: memberId });
  });

  it('key changes: created (scopes, never the secret) and revoked', async () => {
    if (!server) return;
    const made = await byMember('POST', '/v1/api_keys', { name: 'short-lived', mode: 'test', scopes: ['tasks:read'] });
    const id = made.reply.body.key.key_id;
    const entry = await expectEntry('api_key.created', made.requestId, ownerActor(), { type: 'api_key', id });
    expect(JSON.stringify(entry)).not.toContain(made.reply.body.secret);
    const revoked = await byMember('DELETE', `/v1/api_keys/${id}`);
    await expectEntry('api_key.revoked', revoked.requestId, ownerActor(), { type: 'api_key', id });
  });

  it("the account's security settings", async () => {
    if (!server) return;
    const set = await byMember('PATCH', '/v1/account/security', { require_totp: false });
    await expectEntry('account.security_updated', set.requestId, ownerActor(), { type: 'account' });
  });

  it('project changes: created, parameters, ontology, quality policy, staffing, archived', async () => {
    if (!server) return;
    const made = await byKey('POST', '/v1/projects', { type: 'categorization', name: project });
    await expectEntry('project.created', made.requestId, keyActor(), { type: 'project', id: project });
    const params = await byKey('POST', `/v1/projects/${project}/setParams`, { categories: ['a', 'b'] });
    await expectEntry('project.params_set', params.requestId, keyActor(), { type: 'project', id: project });
    const ontology = await byMember('POST', `/v1/projects/${project}/setOntology`, { ontology: ['a', 'b', 'c'], name: 'v2' });
    await expectEntry('project.ontology_set', ontology.requestId, ownerActor(), { type: 'project', id: project });
    const policy = await byMember('PUT', `/v1/projects/${project}/quality_policy`, { training: { required: 0 } });
    await expectEntry('project.quality_policy_set', policy.requestId, ownerActor(), { type: 'project', id: project });
    const staffing = await byMember('PUT', `/v1/projects/${project}/staffing`, { attempt: ['operator'], review: ['operator'] });
    await expectEntry('project.staffing_set', staffing.requestId, ownerActor(), { type: 'project', id: project });
    const archived = await byKey('POST', `/v1/projects/${project}/archive`);
    await expectEntry('project.archived', archived.requestId, keyActor(), { type: 'project', id: project });
    const unarchived = await byKey('POST', `/v1/projects/${project}/unarchive`);
    await expectEntry('project.unarchived', unarchived.requestId, keyActor(), { type: 'project', id: project });
  });

  it('batch changes: created, staffing, finalized', async () => {
    if (!server) return;
    const made = await byKey('POST', '/v1/batches', { name: batch, project });
    await expectEntry('batch.created', made.requestId, keyActor(), { type: 'batch', id: batch });
    const staffing = await byMember('PUT', `/v1/batches/${batch}/staffing`, { attempt: ['operator'], review: ['operator'] });
    await expectEntry('batch.staffing_set', staffing.requestId, ownerActor(), { type: 'batch', id: batch });
    const finalized = await byKey('POST', `/v1/batches/${batch}/finalize`);
    await expectEntry('batch.finalized', finalized.requestId, keyActor(), { type: 'batch', id: batch });
  });

  it("a customer's audit, and the task's creation is not logged", async () => {
    if (!server) return;
    const created = await byKey('POST', '/v1/task/categorization', categorization);
    taskId = created.reply.body.task_id;
    expect((await owner.call('GET', `/v1/activity?target_id=${taskId}`)).body.docs).toEqual([]);
    const audited = await byMember('POST', `/v1/task/${taskId}/audit`, { accepted: true });
    await expectEntry('task.audited', audited.requestId, ownerActor(), { type: 'task', id: taskId });
  });

  it('a redelivery of a callback', async () => {
    if (!server) return;
    const again = await byKey('POST', `/v1/task/${taskId}/callbacks/redeliver`);
    await expectEntry('task.callback_redelivered', again.requestId, keyActor(), { type: 'task', id: taskId });
  });

  it('a cancellation (of a live task: a person would work on it, so it stays pending)', async () => {
    if (!server) return;
    const live = { 'humantask-mode': 'live' };
    const pending = await byMember('POST', '/v1/task/categorization', categorization, live);
    const id = pending.reply.body.task_id;
    expect(pending.reply.body.status).toBe('pending');
    const canceled = await byMember('POST', `/v1/task/${id}/cancel`, undefined, live);
    await expectEntry('task.canceled', canceled.requestId, ownerActor(), { type: 'task', id }, undefined, 'live');
  });

  it('workers: created, paused, unpaused', async () => {
    if (!server) return;
    const made = await byKey('POST', '/v1/workforce/workers', {
      email: `wanda-${db}@example.com`,
      display_name: 'Wanda',
      roles: ['labeler'],
      password: 'a-long-enough-password',
    });
    workerId = made.reply.body.worker_id;
    await expectEntry('worker.created', made.requestId, keyActor(), { type: 'worker', id: workerId });
    const paused = await byMember('POST', `/v1/workforce/workers/${workerId}/pause`);
    await expectEntry('worker.paused', paused.requestId, ownerActor(), { type: 'worker', id: workerId });
    const unpaused = await byMember('POST', `/v1/workforce/workers/${workerId}/unpause`);
    await expectEntry('worker.unpaused', unpaused.requestId, ownerActor(), { type: 'worker', id: workerId });
  });

  it('bulk operations: an import and an export', async () => {
    if (!server) return;
    const requestId = `activity-${db}-import`;
    const imported = await fetch(`${server.url}/v1/imports?type=categorization`, {
      method: 'POST',
      headers: { authorization: basicAuth(key.secret), 'content-type': 'application/x-ndjson', 'x-request-id': requestId },
      body: `${JSON.stringify({ ...categorization, callback_url: undefined })}\n`,
    });
    const importBody = (await imported.json()) as any;
    expect(imported.status, JSON.stringify(importBody)).toBe(200);
    await expectEntry('import.created', requestId, keyActor(), { type: 'import', id: importBody.import_id });
    const exported = await byMember('POST', '/v1/exports', { format: 'jsonl' });
    await expectEntry('export.created', exported.requestId, ownerActor(), { type: 'export', id: exported.reply.body.export_id });
  });

  it('storage connections: created after their test, deleted', async () => {
    if (!server) return;
    const made = await byMember('POST', '/v1/storage/connections', {
      bucket: 'activity-bucket',
      endpoint: bucket.endpoint,
      access_key_id: s3Keys.accessKeyId,
      secret_access_key: s3Keys.secretAccessKey,
    });
    connectionId = made.reply.body.connection_id;
    const entry = await expectEntry('storage_connection.created', made.requestId, ownerActor(), {
      type: 'storage_connection',
      id: connectionId,
    });
    expect(JSON.stringify(entry)).not.toContain(s3Keys.secretAccessKey);
    // A connection whose test fails is not kept, and not logged.
    const refused = await owner.call('POST', '/v1/storage/connections', {
      json: { bucket: 'no-such-bucket', endpoint: bucket.endpoint, access_key_id: 'x', secret_access_key: 'y' },
    });
    expect(refused.status).toBe(400);
    expect((await owner.call('GET', '/v1/activity?action=storage_connection.created')).body.docs).toHaveLength(1);
    const deleted = await byMember('DELETE', `/v1/storage/connections/${connectionId}`);
    await expectEntry('storage_connection.deleted', deleted.requestId, ownerActor(), { type: 'storage_connection', id: connectionId });
  });

  it('pages the whole log by next_token, newest first, each entry once; a token is refused with other filters', async () => {
    const all = (await owner.call('GET', '/v1/activity?limit=100')).body.docs.map((e: { activity_id: string }) => e.activity_id);
    expect(all.length).toBeGreaterThan(4);
    const walked: string[] = [];
    let token: string | undefined;
    do {
      const page = await owner.call('GET', `/v1/activity?limit=2${token ? `&next_token=${encodeURIComponent(token)}` : ''}`);
      expect(page.status, page.text).toBe(200);
      walked.push(...page.body.docs.map((e: { activity_id: string }) => e.activity_id));
      token = page.body.next_token;
    } while (token && walked.length < 200);
    expect(walked.slice(0, all.length)).toEqual(all);
    expect(new Set(walked).size).toBe(walked.length);
    const first = await owner.call('GET', '/v1/activity?limit=2');
    const other = await owner.call(
      'GET',
      `/v1/activity?limit=2&action=member.invited&next_token=${encodeURIComponent(first.body.next_token)}`,
    );
    expect(other.status).toBe(400);
    expect(other.body.error).toContain('next_token');
    expect((await owner.call('GET', '/v1/activity?next_token=nonsense')).status).toBe(400);
  });
});
