// Account and worker commands of the `humantask accounts|workers` CLI. They run on the store directly, or, while a
// server holds the embedded database (PGlite is single-process), through that server's admin
// interface: HTTP on 127.0.0.1 only, with a token in DATA_DIR/admin.json readable by its owner only.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { accountSummary, createAccount, rotateKey, updateAccount } from './domain/accounts.ts';
import { DomainError, invalid, notFound } from './domain/errors.ts';
import type { CountCheck, Repositories, UnitOfWork } from './domain/ports.ts';
import { operatorActor, recordActivity } from './domain/identity/activity.ts';
import { addOwner, type MemberSettings } from './domain/identity/members.ts';
import {
  changeWorker,
  createWorker,
  listWorkers,
  removeWorker,
  resetPassword,
  type IdentitySettings,
  type WorkerRecord,
} from './domain/workforce/identity.ts';
import { operatorWorkforce } from './domain/workforce/handles.ts';
import { defaultIdentitySettings } from './domain/workforce/settings.ts';
import type { WorkerRole, WorkerStatus } from './domain/workforce/worker.ts';
import { safeError } from './store/errors.ts';

export interface AccountCommand {
  command: 'create' | 'list' | 'rotate-key' | 'set' | 'usage' | 'add-owner';
  name?: string;
  mode?: string;
  /** create --owner, add-owner --email: the owner's e-mail address. */
  owner?: string;
  /** set --password-login on: the way back in when single sign-on fails. */
  passwordLogin?: boolean;
  defaultCallbackUrl?: string | null;
  enableTypes?: string[];
  disableTypes?: string[];
  testCompletionDelayMs?: number;
}

const need = (v: string | undefined, flag: string) => {
  if (!v) throw invalid(`--${flag} is required`);
  return v;
};

/** What account commands need to make an owner and the link that sets their password. */
export interface AccountCommandSettings extends MemberSettings {
  /** PUBLIC_URL (or http://HOST:PORT): where the set-password link points. */
  publicUrl: string;
}

/** An owner for an account, in the caller's transaction, recorded as the operator's: the member and the one-time link. */
async function ownerFor(repos: Repositories, accountId: string, email: string, settings: AccountCommandSettings, now: Date) {
  const { member, token } = await addOwner(repos, accountId, email, settings, now);
  await recordActivity(repos, {
    accountId,
    action: 'member.joined',
    actor: operatorActor,
    target: { type: 'member', id: member.memberId },
    at: now,
    details: { role: 'owner', email },
  });
  return { member_id: member.memberId, email, set_password_url: `${settings.publicUrl}/console/reset-password#token=${token}` };
}

const defaultAccountCommandSettings: AccountCommandSettings = {
  passwordCost: 15,
  linkTtlMs: 7 * 86_400_000,
  publicUrl: 'http://127.0.0.1:8080',
};

export async function runAccountCommand(
  uow: UnitOfWork,
  c: AccountCommand,
  settings: AccountCommandSettings = defaultAccountCommandSettings,
): Promise<unknown> {
  const now = new Date();
  const record = (repos: Repositories, accountId: string, action: string, details?: Record<string, unknown>) =>
    recordActivity(repos, { accountId, action, actor: operatorActor, target: { type: 'account', id: accountId }, at: now, details });
  switch (c.command) {
    case 'create':
      return uow.transaction(async (repos) => {
        const secrets = await createAccount(repos, need(c.name, 'name'), now);
        return c.owner ? { ...secrets, owner: await ownerFor(repos, secrets.account_id, c.owner, settings, now) } : secrets;
      });
    case 'add-owner':
      return uow.transaction(async (repos) => {
        const account = await repos.accounts.findByName(need(c.name, 'name'));
        if (!account) throw notFound(`No account named "${c.name}".`);
        return ownerFor(repos, account.accountId, need(c.owner, 'email'), settings, now);
      });
    case 'list':
      return (await uow.accounts.list()).map(accountSummary);
    case 'rotate-key': {
      const mode = c.mode;
      if (mode !== 'test' && mode !== 'live') throw invalid('--mode is test or live');
      return uow.transaction(async (repos) => {
        const rotated = await rotateKey(repos, need(c.name, 'name'), mode);
        const account = await repos.accounts.findByName(rotated.name);
        await recordActivity(repos, {
          accountId: account!.accountId,
          action: 'api_key.rotated',
          actor: operatorActor,
          target: { type: 'api_key', id: `legacy_${mode}` },
          at: now,
        });
        return rotated;
      });
    }
    case 'set': {
      if (c.testCompletionDelayMs !== undefined && !(Number.isInteger(c.testCompletionDelayMs) && c.testCompletionDelayMs >= 0)) {
        throw invalid('--test-completion-delay-ms is a whole number of milliseconds');
      }
      const { command: _c, name, mode: _m, owner: _o, passwordLogin, ...changes } = c;
      return uow.transaction(async (repos) => {
        const summary = await updateAccount(repos, need(name, 'name'), changes);
        if (passwordLogin !== undefined) {
          const rules = await repos.accountIdentity.get(summary.account_id);
          await repos.accountIdentity.put({ ...rules, passwordLogin });
        }
        await record(repos, summary.account_id, 'account.updated', {
          ...changes,
          ...(passwordLogin !== undefined ? { password_login: passwordLogin } : {}),
        });
        return summary;
      });
    }
    case 'usage': {
      const account = await uow.accounts.findByName(need(c.name, 'name'));
      if (!account) throw notFound(`No account named "${c.name}".`);
      const { name, live_requests, live_requests_charged } = accountSummary(account);
      return { name, live_requests, live_requests_charged };
    }
    default:
      throw invalid(`unknown accounts command "${String(c.command)}"`);
  }
}

export interface WorkerCommand {
  command: 'create' | 'list' | 'set-roles' | 'pause' | 'unpause' | 'remove' | 'reset-password';
  /** Which worker: by id or by e-mail address. */
  worker?: string;
  email?: string;
  displayName?: string;
  roles?: string[];
  calibrator?: boolean;
  password?: string;
  status?: string;
}

/** A worker as the CLI prints it. */
const workerSummary = (w: WorkerRecord) => ({
  worker_id: w.workerId,
  email: w.email,
  display_name: w.displayName,
  roles: w.roles.join(','),
  calibrator: w.calibrator,
  status: w.status,
  created_at: w.createdAt.toISOString(),
  last_seen_at: w.lastSeenAt?.toISOString() ?? null,
});

/** The operator's workforce (account_id null): `humantask workers ...`. */
export async function runWorkerCommand(
  uow: UnitOfWork,
  c: WorkerCommand,
  settings: IdentitySettings = defaultIdentitySettings,
): Promise<unknown> {
  const now = new Date();
  const roles = () => {
    if (!c.roles?.length) throw invalid('--role is required (labeler, reviewer, lead; repeat it for several)');
    return c.roles as WorkerRole[];
  };
  /** The operator's worker named by --worker or --email; another account's worker is not found. */
  const target = async (): Promise<string> => {
    if (c.worker) return c.worker;
    if (!c.email) throw invalid('--worker ID or --email ADDRESS is required');
    const found = await uow.workers.findInWorkforce(operatorWorkforce, c.email);
    if (!found) throw notFound(`No worker of the operator's workforce has the e-mail address ${c.email}.`);
    return found.worker.workerId;
  };
  switch (c.command) {
    case 'create': {
      const { worker, generatedPassword } = await createWorker(
        uow,
        {
          ...operatorWorkforce,
          email: need(c.email, 'email'),
          displayName: c.displayName ?? need(c.email, 'email').split('@')[0]!,
          roles: roles(),
          calibrator: c.calibrator ?? false,
          ...(c.password !== undefined ? { password: c.password } : {}),
        },
        settings,
        now,
      );
      return { ...workerSummary(worker), ...(generatedPassword ? { password: generatedPassword } : {}) };
    }
    case 'list': {
      if (c.status !== undefined && !['active', 'paused', 'removed'].includes(c.status))
        throw invalid('--status is active, paused or removed');
      const out: ReturnType<typeof workerSummary>[] = [];
      let nextToken: string | undefined;
      do {
        const page = await listWorkers(uow, operatorWorkforce, {
          limit: 100,
          ...(c.status ? { status: c.status as WorkerStatus } : {}),
          ...(nextToken ? { nextToken } : {}),
        });
        out.push(...page.workers.map(workerSummary));
        nextToken = page.nextToken;
      } while (nextToken);
      return out;
    }
    case 'set-roles':
      return workerSummary(
        await changeWorker(
          uow,
          operatorWorkforce,
          await target(),
          {
            roles: roles(),
            ...(c.calibrator !== undefined ? { calibrator: c.calibrator } : {}),
          },
          now,
        ),
      );
    case 'pause':
    case 'unpause':
      return workerSummary(
        await changeWorker(uow, operatorWorkforce, await target(), { status: c.command === 'pause' ? 'paused' : 'active' }, now),
      );
    case 'remove':
      return workerSummary(await removeWorker(uow, operatorWorkforce, await target(), now));
    case 'reset-password': {
      const reset = await resetPassword(uow, operatorWorkforce, await target(), c.password, settings, now);
      return {
        worker_id: reset.worker.workerId,
        email: reset.worker.email,
        revoked_tokens: reset.revokedTokens,
        ...(reset.generatedPassword ? { password: reset.generatedPassword } : {}),
      };
    }
    default:
      throw invalid(`unknown workers command "${String(c.command)}"`);
  }
}

/** The operator's view of callbacks that failed for good: newest first, with the last error. */
export async function failedDeliveries(uow: UnitOfWork, limit: number) {
  const failed = await uow.outbox.failed(limit);
  return Promise.all(
    failed.map(async (m) => {
      const last = (await uow.outbox.attemptsFor(m.accountId, m.subject)).filter((a) => a.messageId === m.id).at(-1);
      return {
        account_id: m.accountId,
        mode: m.mode,
        event: m.event,
        subject: m.subject,
        url: m.url,
        attempts: m.attempts,
        first_attempt_at: m.firstAttemptAt?.toISOString(),
        failed_at: m.failedAt?.toISOString(),
        last_result: last ? (last.statusCode !== null ? `HTTP ${last.statusCode}` : last.error) : null,
      };
    }),
  );
}

const countCheckView = (c: CountCheck) => ({
  compared: c.compared,
  differing: c.differing,
  tag_rows_missing: c.tagRowsMissing,
  tag_rows_extra: c.tagRowsExtra,
  differences: c.differences.map((d) => ({
    account_id: d.accountId,
    mode: d.mode,
    scope: ['all', 'project', 'batch', 'tag'][d.scope] ?? String(d.scope),
    project: d.project,
    batch: d.batch,
    tag: d.tag,
    status: d.status,
    type: d.type,
    kept: d.kept,
    actual: d.actual,
  })),
});

const inOrder = (c: CountCheck) => c.differing === 0 && c.tagRowsMissing === 0 && c.tagRowsExtra === 0;

type CountView = ReturnType<typeof countCheckView>;

/**
 * The list counters and the tag index against the tasks (`humantask counts`); with `repair`, when
 * they differ, both are rebuilt in one transaction (writers of tasks wait meanwhile) and checked again.
 */
export async function checkCounts(
  uow: UnitOfWork,
  options: { repair: boolean; limit: number },
): Promise<{ in_order: boolean; repaired: boolean; before?: CountView } & CountView> {
  const before = await uow.counts.check(options.limit);
  if (!options.repair || inOrder(before)) return { in_order: inOrder(before), repaired: false, ...countCheckView(before) };
  await uow.transaction((repos) => repos.counts.rebuild());
  const after = await uow.counts.check(options.limit);
  return { in_order: inOrder(after), repaired: true, ...countCheckView(after), before: countCheckView(before) };
}

export const adminFile = (dataDir: string) => path.join(dataDir, 'admin.json');

/** Starts the admin interface of a server that holds an embedded database. */
export async function startAdmin(
  uow: UnitOfWork,
  dataDir: string,
  log: (err: Record<string, unknown>) => void = (err) => console.error('admin command failed', err),
  identity: IdentitySettings = defaultIdentitySettings,
  accounts: AccountCommandSettings = defaultAccountCommandSettings,
): Promise<{ close(): Promise<void> }> {
  const token = randomBytes(24).toString('hex');
  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const given = Buffer.from(req.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${token}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return answer(401, { error: 'bad admin token' });
    if (req.method !== 'POST' || !['/accounts', '/counts', '/deliveries', '/workers'].includes(req.url ?? ''))
      return answer(404, { error: 'not found' });
    const run = (input: unknown) =>
      req.url === '/deliveries'
        ? failedDeliveries(uow, Number((input as { limit?: number }).limit ?? 100))
        : req.url === '/counts'
          ? checkCounts(uow, {
              repair: (input as { repair?: boolean }).repair === true,
              limit: Number((input as { limit?: number }).limit ?? 100),
            })
          : req.url === '/workers'
            ? runWorkerCommand(uow, input as WorkerCommand, identity)
            : runAccountCommand(uow, input as AccountCommand, accounts);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve()
        .then(() => run(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
        .then(
          (result) => answer(200, { result }),
          (err) => {
            if (err instanceof DomainError) return answer(400, { error: err.message });
            // No SQL text or parameters in the answer: the operator reads the server's log.
            log(safeError(err));
            answer(500, { error: 'the command failed on the server (see its log)' });
          },
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  writeFileSync(adminFile(dataDir), JSON.stringify({ url: `http://127.0.0.1:${port}`, token, pid: process.pid }), { mode: 0o600 });
  return {
    close: async () => {
      rmSync(adminFile(dataDir), { force: true });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
