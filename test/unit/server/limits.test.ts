// The pieces of the limits of issue 31 that need no server: the password hashing gate (how many
// run, wait and are refused, in whose turn) and the client address behind trusted proxies.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { hashGate, type HashTicket } from '../../../server/domain/workforce/passwords.ts';
import { clientAddressOf } from '../../../server/http/client-address.ts';

const settled = () => new Promise((r) => setImmediate(r));

describe('the password hashing gate', () => {
  it('runs `concurrency` at once, queues up to `queue`, refuses the rest at once as full', async () => {
    const hashed: number[] = [];
    const gate = hashGate({ concurrency: 2, queue: 1, perSubject: 10 }, { hashed: () => hashed.push(1) });
    const tickets = ['a', 'b', 'c'].map((s) => gate.admit([s]) as HashTicket);
    expect(gate.admit(['d'])).toBe('full');
    const started: string[] = [];
    tickets.forEach((t, i) => void t.ready.then(() => started.push('abc'[i]!)));
    await settled();
    expect(started).toEqual(['a', 'b']);
    tickets[0]!.release();
    await settled();
    expect(started).toEqual(['a', 'b', 'c']);
    expect(hashed).toHaveLength(3);
    // Released twice: counted once.
    tickets[0]!.release();
    expect(gate.admit(['e'])).not.toBe('full');
  });

  it('refuses a subject with `perSubject` in progress, whichever of its subjects it is', () => {
    const refusals: string[] = [];
    const gate = hashGate({ concurrency: 1, queue: 10, perSubject: 2 }, { refused: (why) => refusals.push(why) });
    gate.admit(['address:a', 'email:x']);
    gate.admit(['address:a', 'email:y']);
    expect(gate.admit(['address:a', 'email:z'])).toBe('subject');
    expect(gate.admit(['address:b', 'email:x'])).not.toBe('subject');
    expect(gate.admit(['address:c', 'email:x'])).toBe('subject');
    expect(refusals).toEqual(['subject', 'subject']);
  });

  it('starts next the waiting client with the fewest running: one client with many waiting does not make another wait behind them', async () => {
    const gate = hashGate({ concurrency: 2, queue: 10, perSubject: 10 });
    const order: string[] = [];
    const admit = (subject: string, name: string) => {
      const t = gate.admit([subject]) as HashTicket;
      void t.ready.then(() => {
        order.push(name);
        setImmediate(t.release);
      });
      return t;
    };
    for (const n of ['f1', 'f2', 'f3', 'f4', 'f5']) admit('flood', n);
    admit('genuine', 'g1');
    for (let i = 0; i < 100 && order.length < 6; i++) await settled();
    // f1 and f2 run; when one ends, the genuine client (none running) goes before the flood's third.
    expect(order.slice(0, 3)).toEqual(['f1', 'f2', 'g1']);
    expect(order).toHaveLength(6);
  });

  it('frees the place of one that gives up while waiting', async () => {
    const gate = hashGate({ concurrency: 1, queue: 1, perSubject: 10 });
    const running = gate.admit(['a']) as HashTicket;
    const waiting = gate.admit(['b']) as HashTicket;
    expect(gate.admit(['c'])).toBe('full');
    waiting.release();
    const next = gate.admit(['c']) as HashTicket;
    let started = false;
    void next.ready.then(() => (started = true));
    running.release();
    await settled();
    expect(started).toBe(true);
  });
});

const request = (peer: string, headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress: peer }, headers, connection: { remoteAddress: peer } }) as unknown as IncomingMessage;

describe('the client address', () => {
  it('is the peer without TRUSTED_PROXIES, whatever the headers say', () => {
    const address = clientAddressOf([]);
    expect(address(request('192.0.2.1', { 'x-forwarded-for': '198.51.100.1', forwarded: 'for=198.51.100.2' }))).toBe('192.0.2.1');
  });

  it('is the right-most X-Forwarded-For hop that is not a trusted proxy', () => {
    const address = clientAddressOf(['10.0.0.0/8', '::1']);
    expect(address(request('10.0.0.2', { 'x-forwarded-for': '203.0.113.9, 198.51.100.1' }))).toBe('198.51.100.1');
    expect(address(request('10.0.0.2', { 'x-forwarded-for': '198.51.100.1, 10.1.2.3' }))).toBe('198.51.100.1');
    expect(address(request('::1', { 'x-forwarded-for': '2001:db8::5' }))).toBe('2001:db8::5');
    expect(address(request('::ffff:10.0.0.2', { 'x-forwarded-for': '198.51.100.4' }))).toBe('198.51.100.4');
    // A peer that is no trusted proxy: its header is not read.
    expect(address(request('192.0.2.1', { 'x-forwarded-for': '198.51.100.1' }))).toBe('192.0.2.1');
    expect(address(request('10.0.0.2'))).toBe('10.0.0.2');
  });

  it('reads Forwarded (RFC 7239) when told to: ports, brackets, several elements, obfuscated nodes; a malformed header names the proxy', () => {
    const address = clientAddressOf(['10.0.0.0/8'], 'forwarded');
    expect(address(request('10.0.0.2', { forwarded: 'for=192.0.2.43' }))).toBe('192.0.2.43');
    expect(address(request('10.0.0.2', { forwarded: 'for="192.0.2.43:47011";proto=https' }))).toBe('192.0.2.43');
    expect(address(request('10.0.0.2', { forwarded: 'for="[2001:db8:cafe::17]:4711"' }))).toBe('2001:db8:cafe::17');
    expect(address(request('10.0.0.2', { forwarded: 'for=198.51.100.1, for=10.3.3.3' }))).toBe('198.51.100.1');
    expect(address(request('10.0.0.2', { forwarded: 'for=_hidden, for=10.3.3.3' }))).toBe('_hidden');
    expect(address(request('10.0.0.2', { forwarded: 'for=198.51.100.1', 'x-forwarded-for': '203.0.113.1' }))).toBe('198.51.100.1');
    expect(address(request('10.0.0.2', { 'x-forwarded-for': '203.0.113.1' }))).toBe('10.0.0.2');
    expect(address(request('10.0.0.2', { forwarded: 'for=="broken' }))).toBe('10.0.0.2');
  });

  it('refuses a TRUSTED_PROXIES entry that is no address or CIDR', () => {
    expect(() => clientAddressOf(['10.0.0.0/33'])).toThrow();
    expect(() => clientAddressOf(['not-an-address'])).toThrow();
  });
});
