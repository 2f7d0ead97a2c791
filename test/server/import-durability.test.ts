// Issue 36: `kill -9` of the server during an import, on PGlite (DATA_DIR) and PostgreSQL. The
// server (a real `humantask serve` process) is killed once the import has created some of its
// tasks; a server restarted on the same database (in this process, on a clock the test moves past
// the dead server's lease: test/support/clock.ts) goes on from where it stopped. Every task the
// import counted before the kill is there, no line is created twice (each line is a distinct body:
// one read twice would count as a duplicate), and in the end there is exactly one task per line.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { startServer, type RunningServer } from '../../server/main.ts';
import { testClock } from '../support/clock.ts';
import { basicAuth } from '../support/net.ts';
import { clusterAt } from '../support/postgres.ts';
import { serve } from '../support/process.ts';
import { client, databases, hasPostgres } from '../support/server.ts';
import { endedImport, postImport } from '../support/transfer.ts';
import { until } from '../support/wait.ts';

const lines = 800;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('an import after kill -9 on %s', (db) => {
  it('loses no counted line, creates none twice, and goes on where it stopped', { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-import-kill-'));
    dirs.push(dataDir);
    const env: Record<string, string> = {
      ...(db === 'postgres' ? { DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase() } : { DATA_DIR: dataDir }),
      // Small groups: many transactions, so that the kill lands between and inside them.
      IMPORT_GROUP_LINES: '10',
    };
    const first = await serve(env);
    let second: RunningServer | undefined;
    try {
      const key = /test key: +(test_[0-9a-f]{32})/.exec(first.output())![1]!;
      const file = `${Array.from({ length: lines }, (_, i) =>
        JSON.stringify({
          type: 'categorization',
          callback_url: 'https://example.com/cb',
          instruction: 'Pick',
          attachment_type: 'text',
          attachment: `line ${i + 1}`,
          categories: ['a', 'b'],
        }),
      ).join('\n')}\n`;
      const posted = await postImport(first, key, file);
      expect(posted.status).toBe(200);
      const id = posted.body.import_id as string;
      // Killed once some groups are written (what the import counted then is what was acknowledged).
      let counted = 0;
      const exited = once(first.child, 'exit');
      await until(async () => {
        const res = await fetch(`${first.url}/v1/imports/${id}`, { headers: { authorization: basicAuth(key) } });
        counted = ((await res.json()) as { created: number }).created;
        return counted >= 100;
      }, 'the import to create 100 tasks');
      first.child.kill('SIGKILL');
      await exited;
      expect(counted).toBeLessThan(lines);

      const clock = testClock();
      second = await startServer(
        readConfig({
          ...env,
          PORT: '0',
          RATE_LIMIT_BURST: '0',
          AUTH_FAILURE_BURST: '0',
          DELIVERY_POLL_MS: '0',
          ATTACHMENT_CHECK_POLL_MS: '0',
          TRANSFER_POLL_MS: '50',
        }),
        pino({ level: 'silent' }),
        { now: clock.now },
      );
      const again = client(second, 'current', key);
      // Right after the restart, what was counted is there, and the dead server's lease still holds the import.
      const resumed = await again('GET', `/v1/imports/${id}`);
      expect(resumed.body.created).toBeGreaterThanOrEqual(counted);
      expect((await again('GET', '/v1/tasks?limit=1')).body.total).toBe(resumed.body.created);
      clock.advance(61_000);
      const done = await endedImport(second, key, id, 240_000);
      expect(done).toMatchObject({ state: 'completed', lines_read: lines, created: lines, duplicates: 0, refused: 0 });
      expect(done.bytes_read).toBe(Buffer.byteLength(file));
      // One task per line, none twice.
      const seen = new Set<string>();
      let token: string | undefined;
      do {
        const page = await again('GET', `/v1/tasks?limit=100${token ? `&next_token=${token}` : ''}`);
        for (const t of page.body.docs) {
          expect(seen.has(t.params.attachment), t.params.attachment).toBe(false);
          seen.add(t.params.attachment);
        }
        token = page.body.next_token;
      } while (token);
      expect(seen.size).toBe(lines);
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
      await second?.close();
    }
  });
});
