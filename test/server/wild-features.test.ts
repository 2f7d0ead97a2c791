// Issue 22, rule 6: document transcription features as clients send them, `{type, label}`, with
// `name` a deprecated alias of `label`; answers and synthetic responses use `label`. Raw requests
// (the type is served by the newer generation only), PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('document features on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let call: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-features', new Date());
    call = client(server, 'current', account.test_key);
  });
  afterAll(async () => {
    await server?.close();
  });

  const body = (features: unknown[]) => ({
    callback_url: 'https://example.com/cb',
    instruction: 'Transcribe',
    attachment: 'https://example.com/docs/a.pdf',
    features,
  });

  it('features: [{"type": "block", "label": "barcode"}] is accepted; the synthetic answer labels a block with it', async () => {
    const res = await call('POST', '/v1/task/documenttranscription', {
      json: body([
        { type: 'block', label: 'barcode' },
        { label: 'total', attributes: { format: 'digits' } },
      ]),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params.features).toEqual([
      { type: 'block', label: 'barcode' },
      { label: 'total', attributes: { format: 'digits' } },
    ]);
    const read = await call('GET', `/v1/task/${res.body.task_id}`);
    const labelled = read.body.response.annotations.filter((a: { label?: string }) => a.label !== undefined);
    expect(labelled.map((a: { label: string; type: string }) => [a.label, a.type])).toEqual([
      ['barcode', 'block'],
      ['total', 'line'],
    ]);
  });

  it('the deprecated name is still accepted and stored as label', async () => {
    const res = await call('POST', '/v1/task/documenttranscription', {
      json: body([{ name: 'invoice_number', description: 'After "Invoice #"' }]),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params.features).toEqual([{ label: 'invoice_number', description: 'After "Invoice #"' }]);
    const read = await call('GET', `/v1/task/${res.body.task_id}`);
    expect(read.body.response.annotations.some((a: { label?: string }) => a.label === 'invoice_number')).toBe(true);
  });

  it.each([
    ['label and name differ', [{ label: 'a', name: 'b' }], 'features/0/name'],
    ['a label twice, once by its alias', [{ label: 'a' }, { name: 'a' }], 'features/1/name "a" is used twice'],
    ['neither label nor name', [{ type: 'line' }], 'features.0'],
    ['a type outside the region kinds', [{ label: 'a', type: 'paragraph' }], 'features.0.type'],
  ] as const)('%s → 400 naming the feature', async (_case, features, message) => {
    const res = await call('POST', '/v1/task/documenttranscription', { json: body([...features]) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(message);
  });
});
