// Imports and exports (issue 36, current generation): an import creates each line's task once,
// also when the same file is imported again; an export holds exactly the tasks the list shows for
// the same filters, in the list's order.
import { gunzipSync } from 'node:zlib';
import { expectStatus, expectThat, type Check, type CheckContext } from '../types.ts';
import { categorization, listTasks, withSink } from './helpers.ts';

const area = 'Imports and exports';
const seed = 'decision: imports and exports (docs/decisions/0014-imports-and-exports.md)';

/** Posts a JSON Lines file and waits for the import to end: the ended import. */
async function importFile(ctx: CheckContext, lines: unknown[]): Promise<any> {
  // The SINK stand-in of the lines made the receiver's sink address, as a single creation's body is.
  const bodies = await Promise.all(lines.map((l) => withSink(ctx, l)));
  const posted = await ctx.call('POST', '/v1/imports', {
    raw: { contentType: 'application/x-ndjson', body: `${bodies.map((l) => JSON.stringify(l)).join('\n')}\n` },
  });
  expectStatus(posted, 200, 'importing a file');
  return ctx.until(`import ${posted.body.import_id} to end`, async () => {
    const got = await ctx.call('GET', `/v1/imports/${posted.body.import_id}`);
    return ['completed', 'stopped', 'failed'].includes(got.body?.state) ? got.body : undefined;
  });
}

export const transferChecks: Check[] = [
  {
    id: 'transfer/import-exactly-once',
    area,
    seed,
    rule: 'An import creates one task per line; importing the same file again creates nothing (each line a duplicate, by its unique_id or, without one, by its body).',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const tag = ctx.unique('imported').slice(0, 60);
      const lines = [0, 1, 2, 3].map((i) => ({
        type: 'categorization',
        ...categorization({ attachment: `${tag} line ${i}`, tags: [tag] }),
        ...(i % 2 ? { unique_id: `${tag}-${i}` } : {}),
      }));
      const first = await importFile(ctx, lines);
      expectThat(
        first.state === 'completed' && first.created === 4 && first.duplicates === 0,
        'the first import should create 4 tasks',
        first,
      );
      const second = await importFile(ctx, lines);
      expectThat(
        second.state === 'completed' && second.created === 0 && second.duplicates === 4,
        'the same file imported again should create nothing (4 duplicates)',
        second,
      );
      const listed = await listTasks(ctx, { tags: tag });
      expectThat(listed.total === 4, `the list should hold each line's task once (4 tasks tagged ${tag})`, listed);
    },
  },
  {
    id: 'transfer/export-matches-list',
    area,
    seed,
    rule: 'A JSON Lines export holds exactly the tasks the list shows for the same filters, each as the list shows it, in the list order.',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const tag = ctx.unique('exported').slice(0, 60);
      const made = await importFile(
        ctx,
        [0, 1, 2].map((i) => ({ type: 'categorization', ...categorization({ attachment: `${tag} ${i}`, tags: [tag] }) })),
      );
      expectThat(made.created === 3, 'the import should create 3 tasks', made);
      const asked = await ctx.call('POST', '/v1/exports', { query: { tags: tag }, json: { format: 'jsonl' } });
      expectStatus(asked, 200, 'asking for an export');
      const done = await ctx.until(`export ${asked.body.export_id} to end`, async () => {
        const got = await ctx.call('GET', `/v1/exports/${asked.body.export_id}`);
        return ['completed', 'failed', 'expired'].includes(got.body?.state) ? got.body : undefined;
      });
      expectThat(done.state === 'completed', 'the export should complete', done);
      const file = await fetch(done.download_url);
      expectThat(file.status === 200, `the download link should answer 200, not ${file.status}`);
      const exported = gunzipSync(Buffer.from(await file.arrayBuffer()))
        .toString('utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      const listed = await listTasks(ctx, { tags: tag });
      expectThat(
        JSON.stringify(exported) === JSON.stringify(listed.docs),
        'the export should hold the listed tasks, as the list shows them, in its order',
        { exported: exported.map((t) => t.task_id), listed: listed.docs.map((t: { task_id: string }) => t.task_id) },
      );
    },
  },
];
