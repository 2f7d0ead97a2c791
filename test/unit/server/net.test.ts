// The SSRF-guarded HTTP client, against real listeners on loopback only. Canary listeners on
// 127.0.0.2, 127.0.0.3 and ::1 (on every port the suite uses) must never see a connection.
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { nonPublicReason, parseCidr, refusalReason, safeRequest, type ResolvedAddress } from '../../../server/delivery/net.ts';

interface Listener {
  host: string;
  port: number;
  connections: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  sockets: Set<net.Socket>;
  close(): Promise<void>;
}

const FIFTY_MB = 50 * 1024 * 1024;
const bigWrites = { bytesWritten: 0, closed: false };

function listen(host: string, port: number, handler: http.RequestListener): Promise<Listener> {
  const server = http.createServer(handler);
  const listener: Listener = {
    host,
    port,
    connections: 0,
    requests: [],
    sockets: new Set(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of listener.sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('connection', (socket) => {
    listener.connections++;
    listener.sockets.add(socket);
    socket.on('close', () => listener.sockets.delete(socket));
  });
  server.on('request', (req) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () =>
      listener.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      listener.port = (server.address() as net.AddressInfo).port;
      resolve(listener);
    });
  });
}

let port = 0;
let receiver: Listener; // 127.0.0.1:port, the only allowed destination (and a canary when it is not allowed)
let canaries: Listener[] = []; // 127.0.0.2, 127.0.0.3, ::1 (when there is IPv6) on the same port
let v6receiver: Listener | undefined; // ::1 on another port, for the allowed-IPv6 case

const canary = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('canary reached');

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  switch (path) {
    case '/echo':
      req.on('end', () => {
        res.setHeader('x-answer', 'yes');
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.statusCode = 201;
        res.end('x'.repeat(5000));
      });
      req.resume();
      return;
    case '/utf8':
      res.end('ééé'); // 6 bytes; a 3-byte limit cuts the second character in half
      return;
    case '/redirect':
      res.writeHead(302, { location: `http://127.0.0.2:${port}/stolen` }).end();
      return;
    case '/redirect3':
      res.writeHead(307, { location: `http://127.0.0.3:${port}/stolen` }).end();
      return;
    case '/hang':
      return; // accepts, reads, never answers
    case '/trickle': {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case '/short':
      // Promises 1000 bytes, sends 10, hangs up.
      res.writeHead(200, { 'content-length': '1000' });
      res.write('0123456789', () => setTimeout(() => req.socket.destroy(), 20));
      return;
    case '/reset':
      req.socket.destroy();
      return;
    case '/fifty': {
      res.writeHead(200, { 'content-length': String(FIFTY_MB), 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        // Honour backpressure, so the sender itself never buffers the 50 MB.
        while (bigWrites.bytesWritten < FIFTY_MB && !res.destroyed) {
          bigWrites.bytesWritten += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      res.on('close', () => (bigWrites.closed = true));
      pump();
      return;
    }
    default:
      res.end('ok');
  }
}

beforeAll(async () => {
  // Some containers have no IPv6 loopback; the ::1 cases then go without their listeners.
  const probe = await listen('::1', 0, canary).catch(() => undefined);
  await probe?.close();
  // One port free on 127.0.0.1, .2, .3 (and ::1) at once (a few attempts at most).
  for (let attempt = 0; attempt < 10 && !receiver; attempt++) {
    const opened: Listener[] = [];
    try {
      const first = await listen('127.0.0.2', 0, canary);
      opened.push(first);
      port = first.port;
      opened.push(await listen('127.0.0.3', port, canary));
      if (probe) opened.push(await listen('::1', port, canary));
      const r = await listen('127.0.0.1', port, route);
      canaries = opened;
      receiver = r;
    } catch {
      await Promise.all(opened.map((l) => l.close()));
    }
  }
  if (!receiver) throw new Error('no common free port on loopback');
  if (probe) v6receiver = await listen('::1', 0, (_req, res) => res.end('v6 ok'));
});

afterAll(async () => {
  await Promise.all([...canaries, receiver, v6receiver].filter((l) => l !== undefined).map((l) => l.close()));
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const c of canaries) {
    expect(c.connections, `canary ${c.host}:${c.port}`).toBe(0);
  }
});

const base = { timeoutMs: 5_000, maxResponseBytes: 1_000 };
const resolver =
  (...addresses: string[]) =>
  async (): Promise<ResolvedAddress[]> =>
    addresses.map((address) => ({ address, family: net.isIP(address) }));

describe('safeRequest: a permitted destination', () => {
  it('delivers exactly the POST with its body and headers, and returns status, headers and the truncated body', async () => {
    const before = receiver.requests.length;
    const result = await safeRequest(`http://127.0.0.1:${port}/echo?x=1`, {
      ...base,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-callback-auth': 'secret-key', host: 'evil.example' },
      body: '{"task_id":"t1","é":1}',
      allowPrivateNetworks: ['127.0.0.1/32'],
    });
    expect(result).toMatchObject({ ok: true, status: 201, truncated: true });
    if (!result.ok) return;
    expect(result.body).toBe('x'.repeat(1_000));
    expect(result.headers['x-answer']).toBe('yes');
    expect(result.headers['set-cookie']).toBe('a=1, b=2');
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.requests.length).toBe(before + 1);
    const got = receiver.requests.at(-1)!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/echo?x=1');
    expect(got.body).toBe('{"task_id":"t1","é":1}');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['service-callback-auth']).toBe('secret-key');
    expect(got.headers.host).toBe(`127.0.0.1:${port}`); // the URL's host, never a caller's override
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength('{"task_id":"t1","é":1}')));
  });

  it('returns a short answer whole, and drops a character cut by the byte limit', async () => {
    const allow = { allowPrivateNetworks: ['127.0.0.1/32'] };
    expect(await safeRequest(`http://127.0.0.1:${port}/`, { ...base, ...allow, method: 'GET' })).toMatchObject({
      ok: true,
      status: 200,
      body: 'ok',
      truncated: false,
    });
    expect(await safeRequest(`http://127.0.0.1:${port}/utf8`, { ...base, ...allow, method: 'GET' })).toMatchObject({
      ok: true,
      body: 'ééé',
      truncated: false,
    });
    const cut = await safeRequest(`http://127.0.0.1:${port}/utf8`, { ...base, ...allow, method: 'GET', maxResponseBytes: 3 });
    expect(cut).toMatchObject({ ok: true, body: 'é', truncated: true });
  });

  it('reaches an allowed address given as IPv4-mapped IPv6', async () => {
    const before = receiver.requests.length;
    const mapped = await safeRequest(`http://[::ffff:127.0.0.1]:${port}/`, {
      ...base,
      method: 'GET',
      allowPrivateNetworks: ['127.0.0.1/32'],
    });
    expect(mapped).toMatchObject({ ok: true, status: 200, body: 'ok' });
    expect(receiver.requests.length).toBe(before + 1);
  });

  it('reaches an allowed ::1', async (ctx) => {
    if (!v6receiver) return ctx.skip('no IPv6 loopback here');
    const v6 = await safeRequest(`http://[::1]:${v6receiver!.port}/`, { ...base, method: 'GET', allowPrivateNetworks: ['::1/128'] });
    expect(v6).toMatchObject({ ok: true, status: 200, body: 'v6 ok' });
  });

  it('resolves a name once and connects to the checked address (no DNS rebinding), Host kept', async () => {
    const answers = ['127.0.0.1', '127.0.0.2'];
    let calls = 0;
    const resolve = async () => [{ address: answers[Math.min(calls++, 1)]!, family: 4 }];
    const before = receiver.requests.length;
    const result = await safeRequest(`http://hooks.example.test:${port}/`, {
      ...base,
      method: 'POST',
      body: 'b',
      allowPrivateNetworks: ['127.0.0.1/32'],
      resolve,
    });
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(calls).toBe(1);
    expect(receiver.requests.length).toBe(before + 1);
    expect(receiver.requests.at(-1)!.headers.host).toBe(`hooks.example.test:${port}`);
  });

  it('sends the original host name as the TLS server name while dialling the checked address', async () => {
    const names: string[] = [];
    // No certificate: the handshake fails after the ClientHello, which is all this needs.
    const server = tls.createServer({
      SNICallback: (name, cb) => {
        names.push(name);
        cb(new Error('no certificate here'));
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const tlsPort = (server.address() as net.AddressInfo).port;
      const result = await safeRequest(`https://hooks.example.test:${tlsPort}/`, {
        ...base,
        method: 'POST',
        body: 'b',
        allowPrivateNetworks: ['127.0.0.1/32'],
        resolve: resolver('127.0.0.1'),
      });
      expect(result.ok).toBe(false);
      expect(names).toEqual(['hooks.example.test']);
    } finally {
      server.close();
    }
  });
});

describe('safeRequest: the SSRF guard', () => {
  const refused = (): Array<[string, string]> => [
    ['dotted', `http://127.0.0.2:${port}/`],
    ['decimal', `http://2130706434:${port}/`],
    ['octal', `http://0177.0.0.2:${port}/`],
    ['hex', `http://0x7f000002:${port}/`],
    ['short form', `http://127.3:${port}/`],
    ['IPv4-mapped IPv6', `http://[::ffff:127.0.0.2]:${port}/`],
    ['IPv4-mapped IPv6, hex', `http://[::ffff:7f00:3]:${port}/`],
    ['NAT64 of loopback', `http://[64:ff9b::7f00:2]:${port}/`],
    ['::1', `http://[::1]:${port}/`],
    ['https', `https://127.0.0.3:${port}/`],
  ];

  it.each([[[] as string[]], [['127.0.0.1/32']]])(
    'refuses loopback literals in every spelling (allowlist %j)',
    async (allowPrivateNetworks) => {
      for (const [what, url] of refused()) {
        const result = await safeRequest(url, { ...base, method: 'POST', body: 'x', allowPrivateNetworks });
        expect(result, what).toMatchObject({ ok: false, error: 'refused_address' });
      }
    },
  );

  it('refuses localhost and names that resolve to loopback, without connecting anywhere', async () => {
    const before = receiver.connections;
    const options = { ...base, method: 'POST' as const, body: 'x', allowPrivateNetworks: [] };
    expect(await safeRequest(`http://localhost:${port}/`, options)).toMatchObject({ ok: false, error: 'refused_address' });
    expect(await safeRequest(`http://LOCALHOST:${port}/`, options)).toMatchObject({ ok: false, error: 'refused_address' });
    for (const answer of [['127.0.0.2'], ['127.0.0.3'], ['::1'], ['::ffff:127.0.0.1'], ['10.1.2.3'], ['169.254.169.254']]) {
      const result = await safeRequest(`http://internal.example.test:${port}/`, { ...options, resolve: resolver(...answer) });
      expect(result, answer.join()).toMatchObject({ ok: false, error: 'refused_address' });
    }
    expect(receiver.connections).toBe(before); // 127.0.0.1 was a canary here
  });

  it('refuses a name when any one of its addresses is not permitted', async () => {
    const before = receiver.connections;
    const result = await safeRequest(`http://mixed.example.test:${port}/`, {
      ...base,
      method: 'POST',
      allowPrivateNetworks: ['127.0.0.1/32'],
      resolve: resolver('127.0.0.1', '127.0.0.3'),
    });
    expect(result).toMatchObject({ ok: false, error: 'refused_address' });
    expect(receiver.connections).toBe(before);
  });

  it('never follows a redirect: the 3xx comes back and its target gets nothing', async () => {
    for (const path of ['/redirect', '/redirect3']) {
      const result = await safeRequest(`http://127.0.0.1:${port}${path}`, {
        ...base,
        method: 'POST',
        body: 'x',
        allowPrivateNetworks: ['127.0.0.1/32'],
      });
      expect(result).toMatchObject({ ok: true, status: path === '/redirect' ? 302 : 307 });
      if (result.ok) expect(result.headers.location).toMatch(/^http:\/\/127\.0\.0\.[23]:/);
    }
  });

  it('refuses cloud metadata and [::1] without any connection attempt', async () => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    // The spy does see real connections (control).
    await safeRequest(`http://127.0.0.1:${port}/`, { ...base, method: 'GET', allowPrivateNetworks: ['127.0.0.1/32'] });
    expect(connect).toHaveBeenCalled();
    connect.mockClear();
    const urls = [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::1]/',
      'http://0.0.0.0/',
      `http://[::]:${port}/`,
    ];
    for (const url of urls) {
      expect(await safeRequest(url, { ...base, method: 'GET', allowPrivateNetworks: [] }), url).toMatchObject({
        ok: false,
        error: 'refused_address',
      });
    }
    // Metadata and unspecified addresses stay refused even inside an allowlisted range.
    for (const url of urls.slice(0, 3).concat('http://0.0.0.0/')) {
      const result = await safeRequest(url, { ...base, method: 'GET', allowPrivateNetworks: ['0.0.0.0/0', '::/0'] });
      expect(result, url).toMatchObject({ ok: false, error: 'refused_address' });
    }
    expect(connect).not.toHaveBeenCalled();
  });

  it('turns a header it cannot send into a value, not an exception', async () => {
    const before = receiver.connections;
    const result = await safeRequest(`http://127.0.0.1:${port}/`, {
      ...base,
      method: 'POST',
      headers: { 'x-injected': 'a\r\nx-evil: 1' },
      allowPrivateNetworks: ['127.0.0.1/32'],
    });
    expect(result).toMatchObject({ ok: false, error: 'other' });
    expect(receiver.connections).toBe(before);
  });

  it('accepts only http: and https: URLs', async () => {
    for (const url of [
      'ftp://127.0.0.1/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'gopher://127.0.0.1:70/',
      'not a url',
      'http://',
      '',
    ]) {
      expect(await safeRequest(url, { ...base, method: 'GET', allowPrivateNetworks: ['127.0.0.1/32'] }), url).toMatchObject({
        ok: false,
        error: 'invalid_url',
      });
    }
  });
});

describe('safeRequest: network failures come back as values', () => {
  const allow = { allowPrivateNetworks: ['127.0.0.1/32'] };

  it('a server that never answers is a timeout, and its connection is closed', async () => {
    const result = await safeRequest(`http://127.0.0.1:${port}/hang`, { ...base, ...allow, method: 'POST', body: 'x', timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, error: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(5_000);
    await vi.waitFor(() => expect(receiver.sockets.size).toBe(0), { timeout: 2_000 });
  });

  it('an answer that never ends is a timeout too (the limit covers the body)', async () => {
    const result = await safeRequest(`http://127.0.0.1:${port}/trickle`, { ...base, ...allow, method: 'GET', timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, error: 'timeout' });
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('a resolver that never answers is a timeout', async () => {
    const result = await safeRequest('http://slow-dns.example.test/', {
      ...base,
      ...allow,
      method: 'GET',
      timeoutMs: 200,
      resolve: () => new Promise(() => undefined),
    });
    expect(result).toMatchObject({ ok: false, error: 'timeout' });
  });

  it('a reset is connection_reset, nothing listening is connection_refused, a failed lookup is dns', async () => {
    expect(await safeRequest(`http://127.0.0.1:${port}/reset`, { ...base, ...allow, method: 'POST', body: 'x' })).toMatchObject({
      ok: false,
      error: 'connection_reset',
    });
    expect(await safeRequest(`http://127.0.0.1:${port}/short`, { ...base, ...allow, method: 'GET' })).toMatchObject({
      ok: false,
      error: 'connection_reset',
    });
    const closed = await listen('127.0.0.1', 0, canary);
    await closed.close();
    expect(await safeRequest(`http://127.0.0.1:${closed.port}/`, { ...base, ...allow, method: 'POST', body: 'x' })).toMatchObject({
      ok: false,
      error: 'connection_refused',
    });
    const notFound = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example.test'), { code: 'ENOTFOUND' });
    };
    expect(await safeRequest('http://nowhere.example.test/', { ...base, ...allow, method: 'GET', resolve: notFound })).toMatchObject({
      ok: false,
      error: 'dns',
    });
    expect(await safeRequest('http://empty.example.test/', { ...base, ...allow, method: 'GET', resolve: resolver() })).toMatchObject({
      ok: false,
      error: 'dns',
    });
  });

  it('reads at most maxResponseBytes of a 50 MB answer, then lets go of the connection', async () => {
    const maxResponseBytes = 1024 * 1024;
    const rssBefore = process.memoryUsage().rss;
    const result = await safeRequest(`http://127.0.0.1:${port}/fifty`, { ...allow, method: 'GET', timeoutMs: 30_000, maxResponseBytes });
    const rssAfter = process.memoryUsage().rss;
    expect(result).toMatchObject({ ok: true, status: 200, truncated: true });
    if (result.ok) {
      expect(result.body.length).toBe(maxResponseBytes);
      expect(result.headers['content-length']).toBe(String(FIFTY_MB));
    }
    expect(rssAfter - rssBefore).toBeLessThan(25 * 1024 * 1024);
    await vi.waitFor(() => expect(bigWrites.closed).toBe(true), { timeout: 5_000 });
    expect(bigWrites.bytesWritten).toBeLessThan(FIFTY_MB); // the sender was cut off, not drained
  });
});

describe('address rules', () => {
  it.each([
    ['8.8.8.8', null],
    ['1.1.1.1', null],
    ['2606:4700:4700::1111', null],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::808:808', null],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['::127.0.0.1', 'not global unicast'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['64:ff9b::a00:1', 'NAT64 of private'],
    ['2001:db8::1', 'documentation'],
  ])('%s -> %s', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it('allowPrivateNetworks opens exactly its ranges, in either IPv4 notation', () => {
    expect(refusalReason('127.0.0.1', ['127.0.0.1/32'])).toBeNull();
    expect(refusalReason('::ffff:127.0.0.1', ['127.0.0.1/32'])).toBeNull();
    expect(refusalReason('127.0.0.1', ['::ffff:127.0.0.0/104'])).toBeNull();
    expect(refusalReason('127.0.0.2', ['127.0.0.1/32'])).toBe('loopback');
    expect(refusalReason('10.9.8.7', ['10.0.0.0/8'])).toBeNull();
    expect(refusalReason('11.0.0.1', ['10.0.0.0/8'])).toBeNull(); // public anyway
    expect(refusalReason('fd00::5', ['fd00::/8'])).toBeNull();
    expect(refusalReason('fe80::5', ['fd00::/8'])).toBe('link-local');
    expect(refusalReason('169.254.169.254', ['169.254.0.0/16'])).toBe('cloud metadata');
  });

  it('rejects a malformed CIDR', async () => {
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', 'ten', '10.0.0.0/8/8', '1.2.3/8'])
      expect(() => parseCidr(bad), bad).toThrow(TypeError);
    await expect(safeRequest('http://127.0.0.1/', { ...base, method: 'GET', allowPrivateNetworks: ['localhost'] })).rejects.toThrow(
      TypeError,
    );
  });
});
