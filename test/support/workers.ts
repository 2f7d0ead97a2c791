// Workers for tests: created in the server's store (as `humantask workers create` or an account's
// POST /v1/workforce/workers would), then logged in over HTTP, so the token is a real session.
import { randomBytes } from 'node:crypto';
import type { Mode } from '../../server/domain/model.ts';
import type { UnitOfWork } from '../../server/domain/ports.ts';
import { createWorker as createWorkerRecord } from '../../server/domain/workforce/identity.ts';
import type { WorkerPrincipal, WorkerRole } from '../../server/domain/workforce/worker.ts';

export interface TestWorker {
  workerId: string;
  email: string;
  password: string;
  /** A session token for `Authorization: Bearer <token>` at /worker/v1. */
  token: string;
  accountId: string | null;
}

export interface WorkerOptions {
  /** The account whose own worker it is; null or absent: the operator's workforce. */
  accountId?: string | null;
  /** The mode of the key that made it (an account's test key makes test-mode workers); absent: live. */
  mode?: Mode;
  roles?: WorkerRole[];
  calibrator?: boolean;
  email?: string;
  displayName?: string;
}

/** Cheap hashing for tests (the server's own cost applies to logins; see startTestServer). */
const testCost = { passwordCost: 10, sessionTtlMs: 3_600_000, sessionMaxMs: 86_400_000 };

export async function createWorker(server: { url: string; uow: UnitOfWork }, options: WorkerOptions = {}): Promise<TestWorker> {
  const email = options.email ?? `worker-${randomBytes(6).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const accountId = options.accountId ?? null;
  const { worker } = await createWorkerRecord(
    server.uow,
    {
      accountId,
      mode: options.mode ?? 'live',
      email,
      displayName: options.displayName ?? email.split('@')[0]!,
      roles: options.roles ?? ['labeler'],
      calibrator: options.calibrator ?? false,
      password,
    },
    testCost,
    new Date(),
  );
  return { workerId: worker.workerId, email, password, token: await logIn(server, email, password), accountId };
}

/** Logs in over HTTP; the session token. */
export async function logIn(server: { url: string }, email: string, password: string): Promise<string> {
  const res = await fetch(`${server.url}/worker/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`log-in of ${email} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** Headers of a worker's request. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface WorkerAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A caller of the worker API (`path` from /worker on, as `/v1/assignments/next`) with a worker's token (none: anonymous). */
export const workerClient =
  (server: { url: string }, token: string | null) =>
  async (method: string, path: string, json?: unknown, headers: Record<string, string> = {}): Promise<WorkerAnswer> => {
    const res = await fetch(`${server.url}/worker${path}`, {
      method,
      headers: { ...(token ? bearer(token) : {}), ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  };

/**
 * A worker as a request presents it, with its record in the store (assignments and events reference
 * workers; it has no password: it works through the domain functions, not over HTTP). A worker
 * already stored under that id is kept.
 */
export async function storedWorker(uow: UnitOfWork, principal: WorkerPrincipal, displayName: string): Promise<WorkerPrincipal> {
  if (!(await uow.workers.get(principal.workerId)))
    await uow.workers.insert(
      {
        ...principal,
        roles: [...principal.roles],
        email: `${principal.workerId}@example.com`,
        displayName,
        createdAt: new Date(),
        lastSeenAt: null,
      },
      null,
    );
  return principal;
}
