// Code samples of every operation for the reference (`x-codeSamples`, which Redoc shows beside the
// operation): curl and our TypeScript client, made from the contract's own examples at docs build
// time. test/code-samples.test.ts runs the curl ones against a real server.
import type { Api } from './lib.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed YAML document, walked by the keys the OpenAPI format defines
type Json = Record<string, any>;

/** The client package's import name (one place, should the package be renamed). */
export const clientPackage = '@humantask/client';

/** Path parameters become shell variables named after them: `{taskId}` -> `$TASK_ID`. */
export const shellVariable = (param: string) => param.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();

export interface CodeSample {
  lang: 'curl' | 'TypeScript';
  label: string;
  source: string;
}

/** The first example of an operation's JSON body, if it has one. */
export function bodyExample(op: Json, resolve: (n: Json) => Json): unknown {
  const content = op.requestBody?.content?.['application/json'];
  if (!content) return undefined;
  const first = Object.values<Json>(content.examples ?? {})[0];
  return first ? resolve(first).value : content.example;
}

/** The first example of a body of another media type (a file to import), if the operation has no JSON body. */
function fileExample(op: Json, resolve: (n: Json) => Json): { media: string; text: string } | undefined {
  const content = op.requestBody?.content ?? {};
  if (content['application/json']) return undefined;
  for (const [media, entry] of Object.entries<Json>(content)) {
    const first = Object.values<Json>(entry.examples ?? {})[0];
    if (first && typeof resolve(first).value === 'string') return { media, text: resolve(first).value as string };
  }
  return undefined;
}

const basePath: Record<Api, string> = { current: '', legacy: '/legacy', workforce: '/worker' };

export function codeSamples(gen: Api, apiPath: string, method: string, op: Json, resolve: (n: Json) => Json): CodeSample[] {
  const body = bodyExample(op, resolve);
  const pathParams = [...apiPath.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const shellPath = apiPath.replaceAll(/\{(\w+)\}/g, (_m, p: string) => `$${shellVariable(p)}`);
  // The worker API takes a worker's Bearer token (none to log in; the media route a lease token in
  // the query), the generations an API key.
  const leaseInQuery = (op.security ?? []).some((s: Json) => 'leaseToken' in s);
  // Tag Identity (issue 34): a public operation takes no credential; a members-only one, the
  // member's session cookie (and its CSRF token on a change), never a key.
  const access = op['x-access'] as { public?: boolean; scope?: string } | undefined;
  const membersOnly = gen !== 'workforce' && access !== undefined && !access.public && access.scope === undefined;
  const csrf = method === 'get' ? '' : `-H "X-CSRF-Token: $HUMANTASK_CSRF_TOKEN" `;
  const auth =
    gen !== 'workforce'
      ? access?.public
        ? ''
        : membersOnly
          ? `-b "humantask_session=$HUMANTASK_SESSION" ${csrf}`
          : `-u "$HUMANTASK_KEY:" `
      : op.security?.length === 0 || leaseInQuery
        ? ''
        : `-H "Authorization: Bearer $HUMANTASK_WORKER_TOKEN" `;
  const curl = [`curl ${auth}-X ${method.toUpperCase()} "$HUMANTASK_URL${basePath[gen]}${shellPath}"`];
  // Required query parameters (and a credential in the query) from shell variables named after them.
  const query = [
    ...(op.parameters ?? [])
      .map(resolve)
      .filter((p: Json) => p.in === 'query' && p.required)
      .map((p: Json) => p.name as string),
    ...(leaseInQuery ? ['lease_token'] : []),
  ];
  if (query.length) curl.push(`-G ${query.map((q) => `--data-urlencode "${q}=$${q.toUpperCase()}"`).join(' ')}`);
  if (body !== undefined) {
    curl.push(`-H 'content-type: application/json'`);
    // Single-quoted for the shell: a quote in the JSON ends the string, so it is written '\''.
    curl.push(`-d '${JSON.stringify(body, null, 2).replaceAll("'", `'\\''`)}'`);
  }
  const file = fileExample(op, resolve);
  if (file) {
    curl.push(`-H 'content-type: ${file.media}'`);
    curl.push(`--data-binary '${file.text.replaceAll("'", `'\\''`)}'`);
  }
  const sampleCurl: CodeSample = { lang: 'curl', label: 'curl', source: curl.join(' \\\n  ') };
  // The client package has no worker client (yet): the worker API's reference shows curl only; a
  // member's session lives in a browser, and a public operation (a log-in) is the console's: curl only.
  if (gen === 'workforce' || membersOnly || access?.public) return [sampleCurl];
  const create = gen === 'legacy' ? 'createLegacyClient' : 'createClient';
  const init: string[] = [];
  if (pathParams.length) init.push(`params: { path: { ${pathParams.map((p) => `${p}: process.env.${shellVariable(p)}!`).join(', ')} } }`);
  if (body !== undefined) init.push(`body: ${JSON.stringify(body, null, 2).replaceAll('\n', '\n  ')}`);
  if (file) {
    // The file as it is: openapi-fetch sends a string body unchanged with this serializer.
    init.push(
      `body: ${JSON.stringify(file.text)}`,
      'bodySerializer: (b) => b',
      `headers: { 'content-type': ${JSON.stringify(file.media)} }`,
    );
  }
  const ts = [
    `import { ${create} } from '${clientPackage}';`,
    '',
    `const client = ${create}({ apiKey: process.env.HUMANTASK_KEY!, baseUrl: process.env.HUMANTASK_URL! });`,
    `const { data, error } = await client.${method.toUpperCase()}('${apiPath}'${init.length ? `, {\n  ${init.join(',\n  ')},\n}` : ''});`,
    `if (error) throw new Error(\`\${error.status_code}: \${error.error}\`);`,
    `console.log(data);`,
  ].join('\n');
  return [sampleCurl, { lang: 'TypeScript', label: 'TypeScript', source: ts }];
}

/** Adds `x-codeSamples` to every operation of a bundled contract (in place). */
export function addCodeSamples(gen: Api, doc: Json): void {
  const resolve = (node: Json): Json => {
    let n = node;
    while (n && typeof n.$ref === 'string')
      n = n.$ref
        .slice(2)
        .split('/')
        .reduce((acc: Json, k: string) => acc?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    return n;
  };
  for (const [apiPath, item] of Object.entries<Json>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      if (item[method]) item[method]['x-codeSamples'] = codeSamples(gen, apiPath, method, item[method], resolve);
    }
  }
}
