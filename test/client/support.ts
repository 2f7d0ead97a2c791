// Helpers of the client tests: a loopback proxy that resets a connection once, fresh accounts.
import { createServer, connect, type Socket } from 'node:net';
import { createAccount, updateAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import type { TestServer } from '../support/server.ts';

export interface ResetProxy {
  url: string;
  /** Connections reset so far. */
  resets: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback in front of `target`. The first connection whose first request is a
 * POST is forwarded to the server, and reset as soon as the server starts answering: the server
 * did the work, the client sees a network failure. Every other connection passes through.
 */
export async function resetOnceProxy(target: string): Promise<ResetProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let armed = true;
  const proxy: ResetProxy = { url: '', resets: 0, close: async () => undefined };
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.once('data', (first: Buffer) => {
      const reset = armed && first.toString('latin1').startsWith('POST ');
      if (reset) armed = false;
      upstream.write(first);
      client.pipe(upstream);
      if (reset) {
        upstream.once('data', () => {
          proxy.resets++;
          client.resetAndDestroy();
          upstream.destroy();
        });
      } else {
        upstream.pipe(client);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  proxy.url = `http://127.0.0.1:${address.port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return proxy;
}

let accounts = 0;
/** A new account of the test server (its own tasks, nothing else in its lists). */
export async function freshAccount(server: TestServer, settings: { testCompletionDelayMs?: number } = {}): Promise<AccountSecrets> {
  const name = `client-test-${process.pid}-${++accounts}-${Date.now()}`;
  const account = await createAccount(server.uow, name, new Date());
  if (settings.testCompletionDelayMs !== undefined) await updateAccount(server.uow, name, settings);
  return account;
}
