// Issue 32, items 1-4: the list filters real clients send. GET /v1/batches by completion and
// last-audit time; projects archived and listed by `archived`; every list filter in both list forms
// (repeated keys and comma-joined values), matching any of its values; a type alias wherever a type
// is given. Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const categorization = (extra: Record<string, unknown> = {}) => ({
  callback_url: 'https://example.com/cb',
  instruction: 'Pick',
  attachment_type: 'text',
  attachment: 'words',
  categories: ['a', 'b'],
  ...extra,
});

const ids = (res: { body: { docs: { task_id: string }[] } }) => res.body.docs.map((t) => t.task_id).sort();
const names = (res: { body: { docs: { name: string }[] } }) => res.body.docs.map((b) => b.name).sort();

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('list filters clients send on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'list-filters', new Date());
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(['current', 'legacy'] as const)(
    '%s: GET /v1/batches filters by completed_after/before and audited_after/before; a batch shows audited_at',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const project = `times-${generation}`;
      expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: project } })).status).toBe(200);
      const batches: Record<string, { completed_at?: string; audited_at?: string }> = {};
      // early: completed, then audited; late: completed later, never audited; open: no task, never completes.
      for (const name of [`${project}-early`, `${project}-late`, `${project}-open`]) {
        expect((await call('POST', '/v1/batches', { json: { project, name } })).status).toBe(200);
      }
      const early = await call('POST', '/v1/task/categorization', { json: categorization({ batch: `${project}-early` }) });
      expect(early.status, early.text).toBe(200);
      const audited = await call('POST', `/v1/task/${early.body.task_id}/audit`, { json: { accepted: true } });
      expect(audited.status, audited.text).toBe(200);
      const late = await call('POST', '/v1/task/categorization', { json: categorization({ batch: `${project}-late` }) });
      expect(late.status, late.text).toBe(200);
      for (const name of Object.keys({ early: 1, late: 1, open: 1 }).map((k) => `${project}-${k}`)) {
        const got = await call('GET', `/v1/batches/${name}`);
        expect(got.status, got.text).toBe(200);
        batches[name] = got.body;
      }
      const e = batches[`${project}-early`]!;
      const l = batches[`${project}-late`]!;
      expect(e.completed_at).toBeDefined();
      expect(l.completed_at).toBeDefined();
      expect(batches[`${project}-open`]).not.toHaveProperty('completed_at');
      // The batch's audited_at is its task's audit time; an unaudited batch has none.
      expect(e.audited_at).toBe(audited.body.audits[0].audited_at);
      expect(l).not.toHaveProperty('audited_at');

      const list = (query: string) => call('GET', `/v1/batches?project=${project}&${query}`);
      const completedSince = await list(`completed_after=${encodeURIComponent(l.completed_at!)}`);
      expect(completedSince.status, completedSince.text).toBe(200);
      const expectedSince = [`${project}-early`, `${project}-late`].filter((n) => batches[n]!.completed_at! >= l.completed_at!);
      expect(names(completedSince)).toEqual(expectedSince.sort());
      expect(completedSince.body.total).toBe(expectedSince.length);
      const completedUntil = await list(`completed_before=${encodeURIComponent(e.completed_at!)}`);
      expect(names(completedUntil)).toEqual(
        [`${project}-early`, `${project}-late`].filter((n) => batches[n]!.completed_at! <= e.completed_at!).sort(),
      );
      // Audit bounds: only the audited batch, and only inside the bounds.
      expect(names(await list(`audited_after=${encodeURIComponent(e.audited_at!)}`))).toEqual([`${project}-early`]);
      expect(names(await list(`audited_before=${encodeURIComponent(e.audited_at!)}&audited_after=2000-01-01`))).toEqual([
        `${project}-early`,
      ]);
      const after = new Date(Date.parse(e.audited_at!) + 1).toISOString();
      expect(names(await list(`audited_after=${encodeURIComponent(after)}`))).toEqual([]);
      expect((await list('completed_after=yesterday')).status).toBe(400);
    },
  );

  it.each(['current', 'legacy'] as const)(
    '%s: projects are archived and unarchived; GET /v1/projects?archived= filters; an archived project takes no task or batch',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const name = `archive-${generation}`;
      const other = `kept-${generation}`;
      for (const n of [name, other]) {
        const created = await call('POST', '/v1/projects', { json: { type: 'categorization', name: n } });
        expect(created.status, created.text).toBe(200);
        expect(created.body.archived).toBe(false);
      }
      expect((await call('POST', '/v1/batches', { json: { project: name, name: `${name}-b` } })).status).toBe(200);
      const archived = await call('POST', `/v1/projects/${name}/archive`);
      expect(archived.status, archived.text).toBe(200);
      expect(archived.body).toMatchObject({ name, archived: true });
      expect((await call('POST', `/v1/projects/${name}/archive`)).body.archived).toBe(true);
      expect((await call('GET', `/v1/projects/${name}`)).body.archived).toBe(true);

      const listed = async (query: string) => {
        const res = await call('GET', `/v1/projects${query}`);
        expect(res.status, res.text).toBe(200);
        return (res.body as { name: string }[]).map((p) => p.name);
      };
      expect(await listed('?archived=true')).toContain(name);
      expect(await listed('?archived=true')).not.toContain(other);
      expect(await listed('?archived=FALSE')).toContain(other);
      expect(await listed('?archived=false')).not.toContain(name);
      expect(await listed('')).toEqual(expect.arrayContaining([name, other]));
      expect((await call('GET', '/v1/projects?archived=yes')).status).toBe(400);

      const direct = await call('POST', '/v1/task/categorization', { json: categorization({ project: name }) });
      expect(direct.status).toBe(400);
      expect(direct.body.error).toContain('archived');
      const throughBatch = await call('POST', '/v1/task/categorization', { json: categorization({ batch: `${name}-b` }) });
      expect(throughBatch.status).toBe(400);
      expect(throughBatch.body.error).toContain('archived');
      const batch = await call('POST', '/v1/batches', { json: { project: name, name: `${name}-b2` } });
      expect(batch.status).toBe(400);
      expect(batch.body.error).toContain('archived');

      const unarchived = await call('POST', `/v1/projects/${name}/unarchive`);
      expect(unarchived.status, unarchived.text).toBe(200);
      expect(unarchived.body.archived).toBe(false);
      expect(await listed('?archived=false')).toContain(name);
      expect((await call('POST', '/v1/task/categorization', { json: categorization({ project: name }) })).status).toBe(200);
      expect((await call('POST', '/v1/projects/no-such-project/archive')).status).toBe(404);
    },
  );

  describe('every list filter takes repeated keys and comma-joined values', () => {
    let own: AccountSecrets;
    const made: Record<string, { task_id: string }> = {};

    beforeAll(async () => {
      own = await createAccount(server.uow, 'list-forms', new Date());
      const call = client(server, 'current', own.test_key);
      for (const p of ['pa', 'pb', 'pc'])
        expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: p } })).status).toBe(200);
      for (const [b, p] of [
        ['ba', 'pa'],
        ['bb', 'pc'],
        ['bc', 'pb'],
      ])
        expect((await call('POST', '/v1/batches', { json: { project: p, name: b } })).status).toBe(200);
      const create = async (key: string, body: Record<string, unknown>, path = '/v1/task/categorization') => {
        const res = await call('POST', path, { json: body });
        expect(res.status, res.text).toBe(200);
        made[key] = res.body;
      };
      await create('u1', categorization({ unique_id: 'u1', project: 'pa', batch: 'ba' }));
      await create('u2', categorization({ unique_id: 'u2', project: 'pb' }));
      await create('u3', categorization({ unique_id: 'u3', batch: 'bb' }));
      await create(
        'doc',
        { callback_url: 'https://example.com/cb', attachment: 'https://example.com/a.pdf' },
        '/v1/task/documenttranscription',
      );
      // customer review states: u1 accepted, u2 rejected and redone at once in test mode (fixed).
      expect((await call('POST', `/v1/task/${made.u1!.task_id}/audit`, { json: { accepted: true } })).status).toBe(200);
      expect((await call('POST', `/v1/task/${made.u2!.task_id}/audit`, { json: { accepted: false } })).status).toBe(200);
    });

    const task = (key: string) => made[key]!.task_id;

    it.each(['current', 'legacy'] as const)('%s: unique_id, project, batch, customer_review_status in both forms', async (generation) => {
      const call = client(server, generation, own.test_key);
      const get = async (query: string) => {
        const res = await call('GET', `/v1/tasks?${query}`);
        expect(res.status, `${query}: ${res.text}`).toBe(200);
        return res;
      };
      for (const query of ['unique_id=u1&unique_id=u2', 'unique_id=u1,u2', 'unique_id=u1%2Cu2', 'unique_id=u1,u2&unique_id=nothing']) {
        const res = await get(query);
        expect(ids(res), query).toEqual([task('u1'), task('u2')].sort());
        expect(res.body.total, query).toBe(2);
      }
      expect(ids(await get('unique_id=u3'))).toEqual([task('u3')]);
      for (const query of ['project=pa&project=pb', 'project=pa,pb'])
        expect(ids(await get(query)), query).toEqual([task('u1'), task('u2')].sort());
      for (const query of ['batch=ba&batch=bb', 'batch=ba,bb'])
        expect(ids(await get(query)), query).toEqual([task('u1'), task('u3')].sort());
      // Combined with AND: project pa or pb, and batch ba or bb.
      expect(ids(await get('project=pa,pb&batch=ba,bb'))).toEqual([task('u1')]);
      for (const query of ['customer_review_status=accepted,fixed', 'customer_review_status=accepted&customer_review_status=fixed']) {
        const res = await get(query);
        expect(ids(res), query).toEqual([task('u1'), task('u2')].sort());
        expect(res.body.total, query).toBe(2);
      }
      const bad = await call('GET', '/v1/tasks?customer_review_status=accepted,bogus');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('customer_review_status');
      const tooMany = await call('GET', `/v1/tasks?${Array.from({ length: 101 }, (_, i) => `unique_id=x${i}`).join('&')}`);
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error).toContain('unique_id');
    });

    it('current: status and type in both forms', async () => {
      const call = client(server, 'current', own.test_key);
      // Test mode completes every task at once.
      const all = await call('GET', '/v1/tasks');
      for (const query of ['status=completed,canceled', 'status=completed&status=canceled']) {
        const res = await call('GET', `/v1/tasks?${query}`);
        expect(res.status, res.text).toBe(200);
        expect(res.body.total, query).toBe(all.body.total);
      }
      expect((await call('GET', '/v1/tasks?status=completed,bogus')).status).toBe(400);
      for (const query of ['type=categorization,documenttranscription', 'type=categorization&type=documenttranscription']) {
        const res = await call('GET', `/v1/tasks?${query}`);
        expect(res.body.total, query).toBe(all.body.total);
      }
      const documents = await call('GET', '/v1/tasks?type=documenttranscription');
      expect(ids(documents)).toEqual([task('doc')]);
    });

    it.each(['current', 'legacy'] as const)('%s: a type alias is its type in a list filter', async (generation) => {
      const call = client(server, generation, own.test_key);
      const res = await call('GET', '/v1/tasks?type=documentranscription');
      expect(res.status, res.text).toBe(200);
      expect(ids(res)).toEqual([task('doc')]);
      expect(res.body.docs[0].type).toBe('documenttranscription');
      expect(ids(await call('GET', '/v1/tasks?type=documentranscription,segmentannoation'))).toEqual([task('doc')]);
      expect((await call('GET', '/v1/tasks?type=documenttranscriptio')).status).toBe(400);
    });

    it.each(['current', 'legacy'] as const)('%s: batch list filters project and status in both forms', async (generation) => {
      const call = client(server, generation, own.test_key);
      for (const query of ['project=pa,pb', 'project=pa&project=pb']) {
        const res = await call('GET', `/v1/batches?${query}`);
        expect(res.status, res.text).toBe(200);
        expect(names(res), query).toEqual(['ba', 'bc']);
      }
      // ba and bb completed with their tasks; bc never had one.
      for (const query of ['status=completed,staging', 'status=completed&status=staging']) {
        expect(names(await call('GET', `/v1/batches?${query}`)), query).toEqual(['ba', 'bb']);
      }
      expect(names(await call('GET', '/v1/batches?status=in_progress,staging'))).toEqual(['bc']);
      expect((await call('GET', '/v1/batches?status=done')).status).toBe(400);
    });
  });

  it.each(['current', 'legacy'] as const)('%s: a type alias names its type for a project and in the training list', async (generation) => {
    const own = await createAccount(server.uow, `alias-${generation}`, new Date());
    const call = client(server, generation, own.test_key);
    const project = await call('POST', '/v1/projects', { json: { type: 'documentranscription', name: 'docs' } });
    expect(project.status, project.text).toBe(200);
    expect(project.body.type).toBe('documenttranscription');
    // documenttranscription is created through the current generation.
    const task = await client(server, 'current', own.test_key)('POST', '/v1/task/documenttranscription', {
      json: { callback_url: 'https://example.com/cb', attachment: 'https://example.com/a.pdf', project: 'docs' },
    });
    expect(task.status, task.text).toBe(200);
    const seg = await call('POST', '/v1/projects', { json: { type: 'segmentannoation', name: 'segs' } });
    expect(seg.status, seg.text).toBe(200);
    expect(seg.body.type).toBe('segmentannotation');
    const training = await call('POST', '/v1/training_tasks/segmentannoation', {
      json: {
        attachment: 'https://example.com/a.jpg',
        labels: ['road'],
        expected_response: {
          annotations: {
            unlabeled: null,
            labeled: { road: 'https://example.com/m.png' },
            combined: { image: 'https://example.com/c.png', indexedImage: 'https://example.com/i.png' },
          },
          labelMapping: { road: { color: '#804080', index: 1 } },
          instances: {},
        },
      },
    });
    expect(training.status, training.text).toBe(200);
    for (const query of ['type=segmentannoation', 'type=segmentannotation', 'type=segmentannoation,documentranscription']) {
      const res = await call('GET', `/v1/training_tasks?${query}`);
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.docs.map((t: { id: string }) => t.id),
        query,
      ).toEqual([training.body.id]);
    }
    // The creation path of an alias creates its type.
    const created = await call('POST', '/v1/task/segmentannoation', {
      json: { callback_url: 'https://example.com/cb', attachment: 'https://example.com/a.jpg', labels: ['road'] },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.type).toBe('segmentannotation');
  });
});
