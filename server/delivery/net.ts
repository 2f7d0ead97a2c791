// Outbound HTTP to customer-supplied URLs (callbacks, attachment checks, task files passed on to
// workers), guarded against SSRF.
//
// The host is resolved once, every resolved address is checked, and the socket is opened to the
// checked address itself (never to the name, so a second DNS answer cannot rebind it). Redirects
// are never followed, the answer is read up to a byte limit, one timer bounds the whole exchange,
// and network problems come back as values, never as exceptions. `safeStream` is the same guard
// for a body the caller streams on (its timer bounds the head; the caller times the body).
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';

export type SafeResponse =
  | {
      ok: true;
      status: number;
      /** Lower-case names; repeated headers joined with ", ". */
      headers: Record<string, string>;
      /** At most maxResponseBytes of the answer, decoded as UTF-8 (a character cut by the limit is dropped). */
      body: string;
      /** The answer had more than maxResponseBytes; the rest was never read. */
      truncated: boolean;
      durationMs: number;
    }
  | {
      ok: false;
      error: 'timeout' | 'refused_address' | 'connection_refused' | 'connection_reset' | 'dns' | 'invalid_url' | 'other';
      message: string;
      durationMs: number;
    };

export type ResolvedAddress = { address: string; family: number };
/** Resolves a host name to all of its addresses (the default is `dns.lookup(host, { all: true })`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeRequestOptions {
  method: 'POST' | 'GET';
  headers?: Record<string, string>;
  body?: string;
  /** Bounds the whole exchange: name resolution, connect, headers and body. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** CIDRs (e.g. `127.0.0.1/32`, `fd00::/8`) whose addresses may be reached although not public. */
  allowPrivateNetworks: string[];
  /** Name resolution; tests substitute their own. */
  resolve?: Resolver;
  /**
   * Takes the answer's body piece by piece instead of `body` (an import's file, written away as it
   * comes; the answer waits for each piece to be taken). False: enough, the rest is not read
   * (`truncated`). `maxResponseBytes` does not apply.
   */
  sink?: (piece: Buffer) => Promise<boolean>;
}

type Failure = Extract<SafeResponse, { ok: false }>;

// ---------------------------------------------------------------------------------------------
// Addresses as bytes (4 for IPv4, 16 for IPv6), so that ranges are plain prefix comparisons.

type Bytes = number[];

function parseIPv4(text: string): Bytes | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: Bytes = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    bytes.push(n);
  }
  return bytes;
}

function parseIPv6(input: string): Bytes | null {
  let text = input.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) says nothing about the range
  if (isIP(text) !== 6) return null;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // x::a.b.c.d: the dotted quad is the last two groups.
    const v4 = parseIPv4(tail);
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  const toGroups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = toGroups(halves[0] ?? '');
  const right = halves.length > 1 ? toGroups(halves[1] ?? '') : [];
  const groups = halves.length > 1 ? [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right] : left;
  if (groups.length !== 8 || groups.some((g) => !(g >= 0 && g <= 0xffff))) return null;
  const bytes: Bytes = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return bytes;
}

function parseIP(text: string): Bytes | null {
  const family = isIP(text.replace(/%.*$/, ''));
  return family === 4 ? parseIPv4(text) : family === 6 ? parseIPv6(text) : null;
}

function format(bytes: Bytes): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

interface Cidr {
  bytes: Bytes;
  prefix: number;
}

function inCidr(address: Bytes, cidr: Cidr): boolean {
  if (address.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((address[i] ?? 0) & mask) !== ((cidr.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** `::ffff:a.b.c.d` is the IPv4 address a.b.c.d on the wire: treat it as that. */
function unmapIPv4(bytes: Bytes): Bytes {
  if (bytes.length === 16 && inCidr(bytes, IPV4_MAPPED)) return bytes.slice(12);
  return bytes;
}

/** Parses `a.b.c.d/n`, `x::y/n` or a bare address (a host route). Throws TypeError when invalid. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text.trim() : text.slice(0, slash).trim();
  const prefixText = slash < 0 ? undefined : text.slice(slash + 1).trim();
  const bytes = parseIP(addr);
  if (!bytes || addr.includes('%')) throw new TypeError(`not a CIDR: ${JSON.stringify(text)}`);
  const max = bytes.length * 8;
  const prefix = prefixText === undefined ? max : /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max)) throw new TypeError(`not a CIDR: ${JSON.stringify(text)}`);
  // An IPv4-mapped IPv6 network is the IPv4 network it maps.
  if (bytes.length === 16 && prefix >= 96 && inCidr(bytes, IPV4_MAPPED)) return { bytes: bytes.slice(12), prefix: prefix - 96 };
  return { bytes, prefix };
}

function cidrs(list: Array<[string, string]>): Array<[Cidr, string]> {
  return list.map(([c, why]) => [parseCidr(c), why]);
}

const IPV4_MAPPED: Cidr = { bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0], prefix: 96 };

// Never reachable, whatever the allowlist says: a socket to 0.0.0.0 or :: lands on this host, and
// the cloud metadata endpoints hand out credentials.
const ALWAYS_REFUSED = cidrs([
  ['0.0.0.0/8', 'unspecified'],
  ['::/128', 'unspecified'],
  ['169.254.169.254/32', 'cloud metadata'],
  ['169.254.170.2/32', 'cloud metadata'], // ECS task metadata
  ['fd00:ec2::254/128', 'cloud metadata'],
]);

// IANA special-purpose registries (RFC 6890 and successors): nothing here is a public host.
const IPV4_SPECIAL = cidrs([
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

const IPV6_SPECIAL = cidrs([
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
]);

const IPV6_GLOBAL_UNICAST = parseCidr('2000::/3');
// IPv6 forms that carry an IPv4 address a translator or relay would send the packets to.
const NAT64 = parseCidr('64:ff9b::/96');
const SIX_TO_FOUR = parseCidr('2002::/16');

/**
 * Why an address is not a public unicast host, or null when it is. IPv4-mapped IPv6 addresses are
 * judged as the IPv4 address they carry, NAT64 and 6to4 addresses by their embedded IPv4 address.
 */
export function nonPublicReason(address: string): string | null {
  const parsed = parseIP(address);
  if (!parsed) return 'not an IP address';
  const bytes = unmapIPv4(parsed);
  for (const [cidr, why] of ALWAYS_REFUSED) if (inCidr(bytes, cidr)) return why;
  if (bytes.length === 4) {
    for (const [cidr, why] of IPV4_SPECIAL) if (inCidr(bytes, cidr)) return why;
    return null;
  }
  for (const [cidr, why] of IPV6_SPECIAL) if (inCidr(bytes, cidr)) return why;
  if (inCidr(bytes, NAT64)) {
    const why = nonPublicReason(bytes.slice(12).join('.'));
    return why && `NAT64 of ${why}`;
  }
  if (inCidr(bytes, SIX_TO_FOUR)) {
    const why = nonPublicReason(bytes.slice(2, 6).join('.'));
    return why && `6to4 of ${why}`;
  }
  // Outside 2000::/3 nothing is allocated as global unicast (this includes the deprecated
  // IPv4-compatible ::a.b.c.d forms).
  if (!inCidr(bytes, IPV6_GLOBAL_UNICAST)) return 'not global unicast';
  return null;
}

/**
 * Why a request to this address must not be made, or null when it may. Non-public addresses are
 * allowed inside `allowPrivateNetworks`; unspecified and cloud metadata addresses never are.
 */
export function refusalReason(address: string, allowPrivateNetworks: readonly string[]): string | null {
  const why = nonPublicReason(address);
  if (why === null) return null;
  const parsed = parseIP(address);
  if (!parsed) return why;
  const bytes = unmapIPv4(parsed);
  if (ALWAYS_REFUSED.some(([cidr]) => inCidr(bytes, cidr))) return why;
  if (allowPrivateNetworks.some((c) => inCidr(bytes, parseCidr(c)))) return null;
  return why;
}

// ---------------------------------------------------------------------------------------------

const defaultResolve: Resolver = (hostname) => dnsLookup(hostname, { all: true });

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA', 'ENODATA', 'ESERVFAIL', 'ENONAME']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

function classify(err: unknown): { error: Failure['error']; message: string } {
  const e = err as NodeJS.ErrnoException | undefined;
  const code = e?.code ?? '';
  const message = e?.message ? (code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message) : String(err);
  if (code === 'ECONNREFUSED') return { error: 'connection_refused', message };
  if (RESET_CODES.has(code)) return { error: 'connection_reset', message };
  if (code === 'ETIMEDOUT') return { error: 'timeout', message };
  if (DNS_CODES.has(code)) return { error: 'dns', message };
  return { error: 'other', message };
}

/**
 * One HTTP request to a URL a customer gave us. Never throws for network problems (only for an
 * invalid `allowPrivateNetworks` entry, which is a configuration error).
 */
export async function safeRequest(url: string, options: SafeRequestOptions): Promise<SafeResponse> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const fail = (error: Failure['error'], message: string): Failure => ({ ok: false, error, message, durationMs: elapsed() });
  const parsed = parseTarget(url, options, fail);
  if ('ok' in parsed) return parsed;

  let deadline: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Failure>((resolve) => {
    deadline = setTimeout(() => resolve(fail('timeout', `no complete answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  });
  const abort = new AbortController();
  try {
    return await Promise.race([timedOut, exchange(parsed.target, parsed.hostname, options, abort.signal, fail, elapsed)]);
  } finally {
    clearTimeout(deadline);
    abort.abort(); // whatever is still open (a timed-out socket, a slow lookup's follow-up) goes
  }
}

/** The URL parsed and checked for its scheme and host (not yet its addresses), or why not. */
function parseTarget(
  url: string,
  options: { allowPrivateNetworks: readonly string[] },
  fail: (error: Failure['error'], message: string) => Failure,
): { target: URL; hostname: string } | Failure {
  for (const c of options.allowPrivateNetworks) parseCidr(c); // a bad entry is a configuration error: throw now
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return fail('invalid_url', 'not a URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return fail('invalid_url', `scheme ${target.protocol} is not http: or https:`);
  // The WHATWG parser has already turned 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 into dotted
  // quads and lower-cased names; IPv6 literals keep their brackets.
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  if (hostname === '') return fail('invalid_url', 'no host');
  return { target, hostname };
}

/**
 * Resolves the host once (a literal IP is its own answer), checks every address, and makes the
 * request's options for the checked address only: the Host header and TLS name stay the original
 * host, and no code path can resolve the name again.
 */
async function checkedRequestOptions(
  target: URL,
  hostname: string,
  options: Pick<SafeRequestOptions, 'method' | 'headers' | 'allowPrivateNetworks' | 'resolve'> & { bodyLength?: number },
  signal: AbortSignal,
  fail: (error: Failure['error'], message: string) => Failure,
): Promise<{ isHttps: boolean; requestOptions: https.RequestOptions } | Failure> {
  // 1. Resolve once (a literal IP is its own answer) and check every address.
  let addresses: ResolvedAddress[];
  const literal = isIP(hostname);
  if (literal) {
    addresses = [{ address: hostname, family: literal }];
  } else {
    try {
      addresses = await (options.resolve ?? defaultResolve)(hostname);
    } catch (err) {
      const c = classify(err);
      return fail(c.error === 'other' ? 'dns' : c.error, `cannot resolve ${hostname}: ${c.message}`);
    }
    if (addresses.length === 0) return fail('dns', `${hostname} has no addresses`);
  }
  if (signal.aborted) return fail('timeout', 'aborted');
  for (const { address } of addresses) {
    const why = refusalReason(address, options.allowPrivateNetworks);
    // The history the customer reads says no more: what a name resolves to inside our network is ours.
    if (why !== null) return fail('refused_address', `${hostname}: not a public address`);
  }
  // A mapped address is dialled as the IPv4 address it is.
  const firstParsed = parseIP(addresses[0]!.address)!;
  const unmapped = unmapIPv4(firstParsed);
  const checked = unmapped.length === 4 ? { address: format(unmapped), family: 4 } : { address: addresses[0]!.address, family: 6 };

  // 2. Connect to the checked address only; the Host header and TLS name stay the original host.
  const isHttps = target.protocol === 'https:';
  const port = target.port === '' ? (isHttps ? 443 : 80) : Number(target.port);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (name.toLowerCase() !== 'host' && name.toLowerCase() !== 'content-length') headers[name] = value;
  }
  headers.host = target.host;
  if (options.bodyLength !== undefined) headers['content-length'] = String(options.bodyLength);
  // Never called for an IP host; here so that no code path can ever resolve the name again.
  const pinnedLookup: LookupFunction = (_name, opts, callback) => {
    if (opts.all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [checked]);
    else callback(null, checked.address, checked.family);
  };
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const auth = target.username || target.password ? `${decode(target.username)}:${decode(target.password)}` : undefined;
  const requestOptions: https.RequestOptions = {
    method: options.method,
    host: checked.address,
    family: checked.family,
    port,
    path: `${target.pathname}${target.search}`,
    headers,
    setHost: false,
    lookup: pinnedLookup,
    agent: false, // one connection per request: nothing pooled, nothing reused for another host
    signal,
    ...(auth ? { auth } : {}),
    ...(isHttps && !isIP(hostname) ? { servername: hostname.replace(/\.$/, '') } : {}),
  };
  return { isHttps, requestOptions };
}

async function exchange(
  target: URL,
  hostname: string,
  options: SafeRequestOptions,
  signal: AbortSignal,
  fail: (error: Failure['error'], message: string) => Failure,
  elapsed: () => number,
): Promise<SafeResponse> {
  const body = options.body === undefined ? undefined : Buffer.from(options.body, 'utf8');
  const prepared = await checkedRequestOptions(target, hostname, { ...options, bodyLength: body?.length }, signal, fail);
  if ('ok' in prepared) return prepared;
  const { isHttps, requestOptions } = prepared;

  return new Promise<SafeResponse>((resolve) => {
    let settled = false;
    const settle = (result: SafeResponse) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    let req: http.ClientRequest;
    try {
      req = (isHttps ? https : http).request(requestOptions, onResponse);
    } catch (err) {
      // e.g. a header value with a line break: nothing was sent
      return settle(fail('other', err instanceof Error ? err.message : String(err)));
    }
    req.on('error', (err) => {
      if (signal.aborted) return settle(fail('timeout', 'aborted'));
      const c = classify(err);
      settle(fail(c.error, c.message));
    });
    if (body) req.end(body);
    else req.end();

    function onResponse(res: http.IncomingMessage): void {
      const limit = Math.max(0, options.maxResponseBytes);
      const decoder = new StringDecoder('utf8');
      let text = '';
      let received = 0;
      const responseHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const done = (truncated: boolean) =>
        settle({ ok: true, status: res.statusCode ?? 0, headers: responseHeaders, body: text, truncated, durationMs: elapsed() });
      const stop = () => {
        // Enough: drop the rest unread (the socket goes, so nothing more is buffered).
        done(true);
        res.destroy();
        req.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (options.sink) {
          res.pause();
          options.sink(chunk).then(
            (more) => (more ? res.resume() : stop()),
            (err: unknown) => {
              settle(fail('other', err instanceof Error ? err.message : String(err)));
              res.destroy();
              req.destroy();
            },
          );
          return;
        }
        const room = limit - received;
        if (chunk.length <= room) {
          received += chunk.length;
          text += decoder.write(chunk);
          return;
        }
        // A character cut by the limit is left out rather than turned into U+FFFD.
        text += decoder.write(chunk.subarray(0, room));
        received = limit;
        stop();
      });
      res.on('end', () => {
        text += decoder.end();
        done(false);
      });
      res.on('error', (err) => {
        const c = classify(err);
        settle(fail(c.error, c.message));
      });
      res.on('aborted', () => settle(fail('connection_reset', 'the connection closed before the answer was complete')));
    }
  });
}

export interface SafeStreamOptions {
  headers?: Record<string, string>;
  /** Bounds the wait for the answer's head: name resolution, connect, headers. The body is the caller's to time. */
  timeoutMs: number;
  allowPrivateNetworks: readonly string[];
  resolve?: Resolver;
}

/** A GET's answer whose body is read by the caller, as a stream (one connection, closed by `close`). */
export type SafeStream =
  | {
      ok: true;
      status: number;
      /** Lower-case names; repeated headers joined with ", ". */
      headers: Record<string, string>;
      /** The body, unread; it errors when the connection breaks. */
      body: http.IncomingMessage;
      /** Ends the exchange (the socket goes); safe to call at any time, more than once. */
      close(): void;
    }
  | Failure;

/**
 * A GET of a URL a customer gave us whose body is streamed to someone else (the worker API's
 * media route): the same guard as `safeRequest` (one resolution, every address checked, the
 * socket opened to the checked address, no redirects followed), but the body is handed over
 * unread, so that memory stays bounded by the stream's buffer whatever the file's size.
 */
export async function safeStream(url: string, options: SafeStreamOptions): Promise<SafeStream> {
  const started = performance.now();
  const fail = (error: Failure['error'], message: string): Failure => ({
    ok: false,
    error,
    message,
    durationMs: performance.now() - started,
  });
  const parsed = parseTarget(url, options, fail);
  if ('ok' in parsed) return parsed;
  const abort = new AbortController();
  const close = () => abort.abort();
  let deadline: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Failure>((resolve) => {
    deadline = setTimeout(() => resolve(fail('timeout', `no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  });
  const answer = (async (): Promise<SafeStream> => {
    const prepared = await checkedRequestOptions(
      parsed.target,
      parsed.hostname,
      { method: 'GET', headers: options.headers ?? {}, allowPrivateNetworks: [...options.allowPrivateNetworks], resolve: options.resolve },
      abort.signal,
      fail,
    );
    if ('ok' in prepared) return prepared;
    return new Promise<SafeStream>((resolve) => {
      let req: http.ClientRequest;
      try {
        req = (prepared.isHttps ? https : http).request(prepared.requestOptions, (res) => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          resolve({ ok: true, status: res.statusCode ?? 0, headers, body: res, close });
        });
      } catch (err) {
        return resolve(fail('other', err instanceof Error ? err.message : String(err)));
      }
      req.on('error', (err) => {
        if (abort.signal.aborted) return resolve(fail('timeout', 'aborted'));
        const c = classify(err);
        resolve(fail(c.error, c.message));
      });
      req.end();
    });
  })();
  try {
    const result = await Promise.race([timedOut, answer]);
    if (!result.ok) close();
    return result;
  } finally {
    clearTimeout(deadline);
  }
}
