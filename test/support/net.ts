import { createServer } from 'node:net';

/** A free TCP port on loopback (the OS picks it; the socket is closed before returning). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export const basicAuth = (key: string) => 'Basic ' + Buffer.from(`${key}:`).toString('base64');
