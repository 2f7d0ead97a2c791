// Imports and exports over HTTP, as a client does them: send a file, poll the import until it is
// done; ask for an export, poll it, download its file through the signed link.
import { gunzipSync } from 'node:zlib';
import { basicAuth } from './net.ts';
import { until } from './wait.ts';

type Query = Record<string, string | number | object>;

const queryString = (query: Query) =>
  new URLSearchParams(Object.entries(query).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])).toString();

/** POST /v1/imports with `file` as the body: status and answer. */
export async function postImport(
  server: { url: string },
  key: string,
  file: string,
  query: Query = {},
  contentType = 'application/x-ndjson',
) {
  const res = await fetch(`${server.url}/v1/imports?${queryString(query)}`, {
    method: 'POST',
    headers: { authorization: basicAuth(key), 'content-type': contentType },
    body: file,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** GET /v1/imports/{id} until it has ended (completed, stopped or failed). */
export async function endedImport(server: { url: string }, key: string, id: string, ms = 120_000): Promise<any> {
  let last: any;
  await until(
    async () => {
      const res = await fetch(`${server.url}/v1/imports/${id}`, { headers: { authorization: basicAuth(key) } });
      last = await res.json();
      return ['completed', 'stopped', 'failed'].includes(last.state);
    },
    `import ${id} to end`,
    ms,
  );
  return last;
}

/** An import made and waited for: its final state. */
export async function importAll(server: { url: string }, key: string, file: string, query: Query = {}, contentType?: string) {
  const posted = await postImport(server, key, file, query, contentType);
  if (posted.status !== 200) throw new Error(`import refused: ${posted.status} ${JSON.stringify(posted.body)}`);
  return endedImport(server, key, posted.body.import_id);
}

/** POST /v1/exports (filters in the query, options in the body), its end awaited: the export and its file, unzipped. */
export async function exportAll(server: { url: string }, key: string, options: object, filters: Query = {}, ms = 120_000) {
  const res = await fetch(`${server.url}/v1/exports?${queryString(filters)}`, {
    method: 'POST',
    headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
    body: JSON.stringify(options),
  });
  const asked = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`export refused: ${res.status} ${JSON.stringify(asked)}`);
  let done: any;
  await until(
    async () => {
      done = await (await fetch(`${server.url}/v1/exports/${asked.export_id}`, { headers: { authorization: basicAuth(key) } })).json();
      return done.state !== 'queued' && done.state !== 'running';
    },
    `export ${asked.export_id} to end`,
    ms,
  );
  if (done.state !== 'completed') throw new Error(`export ended ${done.state}: ${done.error}`);
  const file = await fetch(done.download_url);
  if (file.status !== 200) throw new Error(`download answered ${file.status}`);
  return { export: done, gzip: Buffer.from(await file.arrayBuffer()) };
}

/** The file of an export, unzipped (a single file's text). */
export const gunzipText = (gzip: Buffer) => gunzipSync(gzip).toString('utf8');
