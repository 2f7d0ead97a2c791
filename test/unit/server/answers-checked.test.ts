// A server that checks its answers (VALIDATE_RESPONSES, on unless NODE_ENV=production) refuses to
// send one that breaks the contract: a handler's answer with a misspelt or mistyped field becomes a
// 500 that is logged, never a 200 with a body no client was promised. The check uses the contract's
// own compiled schemas (server/http/contract.ts, checkAnswer), through the same dispatch every
// operation goes through (server/http/typed.ts).
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../../server/http/contract.ts';
import { errorMapper } from '../../../server/http/errors.ts';
import { dispatch, type HandlerTable, type Operations } from '../../../server/http/typed.ts';
import { contractValidator } from '../../../server/http/validator.ts';

const contract = loadContract('current');
/** The contract's own example of a project. */
const project = (() => {
  const op = contract.doc.paths['/v1/projects/{projectName}'].get;
  const media = contract.resolve(op.responses['200'])!.content['application/json'];
  return Object.values<{ value: Record<string, unknown> }>(media.examples)[0]!.value;
})();

describe('answers checked against the contract', () => {
  const logged: unknown[] = [];
  let origin: string;
  let close: () => void;
  /** What the planted getProject handler answers. */
  let answer: unknown;
  beforeAll(async () => {
    const app = express();
    app.use(contractValidator('current', '/'));
    const table = { getProject: async () => answer } as unknown as HandlerTable<Operations['current']>;
    app.use(dispatch(table, contract.checkAnswer));
    const logger = pino({ level: 'error' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    app.use(errorMapper('current', logger, async () => false));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close?.());

  const get = async () => {
    const res = await fetch(`${origin}/v1/projects/kitchen`, { headers: { connection: 'close' } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('sends an answer the contract allows', async () => {
    answer = project;
    expect(contract.checkAnswer('getProject', 200, project)).toBeNull();
    expect(await get()).toEqual({ status: 200, body: project });
  });

  it('answers 500 for a mistyped or missing field, and logs which', async () => {
    answer = { ...project, name: 17 };
    expect(await get()).toMatchObject({ status: 500, body: { status_code: 500, error: 'Internal server error.' } });
    const { name: _name, ...nameless } = project;
    answer = nameless;
    expect((await get()).status).toBe(500);
    expect(JSON.stringify(logged)).toContain('The answer of getProject does not match the contract: /name must be string');
    expect(JSON.stringify(logged)).toContain("must have required property 'name'");
  });

  it('names the problem of an answer without sending it', () => {
    expect(contract.checkAnswer('getProject', 200, { ...project, name: 3 })).toBe('/name must be string');
    expect(contract.checkAnswer('getProject', 204, {})).toBeNull();
  });
});
