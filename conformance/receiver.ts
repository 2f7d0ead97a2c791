// The callback receiver: a small HTTP server on the callback host that the server under test posts
// callbacks to (`/cb/<label>`) and fetches attachments from (`/file/<status>/<label>`). Each label
// is a mailbox of its own, so that checks do not see each other's callbacks.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReceivedCallback, Receiver } from './types.ts';

export interface RunningReceiver extends Receiver {
  close(): Promise<void>;
}

const MAX_BODY = 11 * 1024 * 1024;

export async function startReceiver(host: string): Promise<RunningReceiver> {
  const callbacks = new Map<string, ReceivedCallback[]>();
  const fetches = new Map<string, ReceivedCallback[]>();
  const statuses = new Map<string, number>();
  const push = (map: Map<string, ReceivedCallback[]>, label: string, item: ReceivedCallback) => {
    const list = map.get(label) ?? [];
    list.push(item);
    map.set(label, list);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://receiver');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      const item: ReceivedCallback = {
        path: url.pathname,
        method: req.method ?? 'GET',
        headers: { ...req.headers },
        body,
        text,
        receivedAt: Date.now(),
      };
      const file = /^\/file\/(\d{3})\/(.+)$/.exec(url.pathname);
      if (file && (req.method === 'GET' || req.method === 'HEAD')) {
        const label = decodeURIComponent(file[2]!);
        push(fetches, label, item);
        const status = Number(file[1]);
        res.writeHead(status, { 'content-type': status === 200 ? 'image/png' : 'text/plain' });
        // A 1×1 PNG is a plausible attachment of every image type.
        res.end(status === 200 ? onePixelPng : 'not found');
        return;
      }
      const callback = /^\/cb\/(.+)$/.exec(url.pathname);
      if (callback) {
        const label = decodeURIComponent(callback[1]!);
        push(callbacks, label, item);
        const status = statuses.get(label) ?? 200;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok' : 'no');
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('unknown path');
    });
  });
  // Callbacks may arrive for a while after a check has moved on; they are recorded all the same.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: (label = 'default') => `${origin}/cb/${encodeURIComponent(label)}`,
    received: (label) => [...(callbacks.get(label) ?? [])],
    respond: (label, status) => void statuses.set(label, status),
    fileUrl: (label, status = 200) => `${origin}/file/${status}/${encodeURIComponent(label)}`,
    fetches: (label) => [...(fetches.get(label) ?? [])],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const onePixelPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
