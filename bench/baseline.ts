// The baseline: a bare node:http server that creates a categorization task as one SQL INSERT
// (pg, pool of 10 like the reference server) into the same PostgreSQL database, with no validation,
// no auth, no idempotency and no outbox. Forked by bench/run.ts (DATABASE_URL, ACCOUNT_ID).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const accountId = process.env.ACCOUNT_ID ?? '';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>;
        const { instruction, callback_url, ...params } = body;
        const now = new Date();
        const taskId = randomUUID().replace(/-/g, '').slice(0, 24);
        const { rows } = await pool.query(
          `insert into tasks (task_id, account_id, mode, generation, type, status, instruction, params, callback_url,
             urgency, created_at, updated_at, metadata, audits)
           values ($1, $2, 'live', 'current', 'categorization', 'pending', $3, $4, $5, 'day', $6, $6, '{}', '[]')
           returning task_id, created_at`,
          [taskId, accountId, instruction ?? null, JSON.stringify(params), callback_url ?? null, now],
        );
        const row = rows[0] as { task_id: string; created_at: Date };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            task_id: row.task_id,
            created_at: row.created_at,
            type: 'categorization',
            status: 'pending',
            instruction,
            callback_url,
            params,
          }),
        );
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      }
    })();
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send?.({ ready: true, url: `http://127.0.0.1:${port}` });
});
process.on('message', (msg: { rss?: boolean; stop?: boolean }) => {
  if (msg.rss) process.send?.({ rss: process.memoryUsage().rss });
  if (msg.stop) server.close(() => void pool.end().then(() => process.exit(0)));
});
