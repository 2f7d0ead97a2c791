// Worker identity (issue 18): log in and out, who am I, API tokens (worker API), and the account's
// own workers (current generation, tag Workforce).
import { wallClock } from '../../domain/clock.ts';
import { invalid, notFound } from '../../domain/errors.ts';
import { resetOperatorStanding, resetStanding } from '../../domain/quality/qualification.ts';
import {
  changeWorker,
  createApiToken,
  createWorker,
  listWorkers,
  login,
  logout,
  removeWorker,
  resetPassword,
  revokeApiToken,
  workerOf,
  type IdentitySettings,
} from '../../domain/workforce/identity.ts';
import type { Caller } from '../../domain/model.ts';
import type { Workforce } from '../../domain/workforce/handles.ts';
import { defaultIdentitySettings } from '../../domain/workforce/settings.ts';
import type { HandlerDeps } from '../tasks.ts';
import { NoContent, type HandlerTable, type Operations, type WorkerHandlerTable } from '../typed.ts';
import { workerProfileView, workerTokenView, workerView } from '../views/workers.ts';
import type { WorkerApiDeps } from './deps.ts';
import { unauthenticated } from './auth.ts';

type WorkerApiIdentity = Pick<
  WorkerHandlerTable,
  'loginWorker' | 'logoutWorker' | 'getCurrentWorker' | 'createWorkerToken' | 'listWorkerTokens' | 'deleteWorkerToken'
>;

export function identityHandlers({ uow, identity, now }: WorkerApiDeps): WorkerApiIdentity {
  return {
    async loginWorker({ body }) {
      const grant = await login(uow, { email: body.email, password: body.password, workforceId: body.workforce_id }, identity, now());
      if (!grant) throw unauthenticated('Wrong e-mail address or password.');
      return {
        token: grant.token,
        expires_at: grant.expiresAt.toISOString(),
        absolute_expires_at: grant.absoluteExpiresAt.toISOString(),
        worker: workerProfileView(grant.worker),
      };
    },
    async logoutWorker({ worker, credential }) {
      if (credential.kind !== 'session')
        throw invalid('This is an API token, not a session; revoke it with DELETE /worker/v1/tokens/{tokenId}.');
      await logout(uow, worker.workerId, credential.tokenId, now());
      return new NoContent();
    },
    async getCurrentWorker({ worker }) {
      return workerProfileView(await workerOf(uow, worker, worker.workerId));
    },
    async createWorkerToken({ worker, body }) {
      const { record, token } = await createApiToken(
        uow,
        worker.workerId,
        { name: body.name, ...(body.expires_at ? { expiresAt: new Date(body.expires_at) } : {}) },
        now(),
      );
      return { ...workerTokenView(record), token };
    },
    async listWorkerTokens({ worker }) {
      return { docs: (await uow.workers.liveApiTokens(worker.workerId, now())).map(workerTokenView) };
    },
    async deleteWorkerToken({ worker, path }) {
      await revokeApiToken(uow, worker.workerId, path.tokenId, now());
      return new NoContent();
    },
  };
}

type Management = Pick<
  HandlerTable<Operations['current']>,
  'createWorker' | 'listWorkers' | 'getWorker' | 'updateWorker' | 'removeWorker' | 'pauseWorker' | 'unpauseWorker' | 'resetWorkerPassword'
>;

/** The workforce a key manages: its account's own workers of its mode (decision 0013). */
const workforceOf = (caller: Caller): Workforce => ({ accountId: caller.account.accountId, mode: caller.mode });

/** An account manages only its own workers, and a key only those of its mode: any other worker id is 404. */
export function workerManagementHandlers({
  uow,
  identity = defaultIdentitySettings,
  now = wallClock,
}: HandlerDeps & { identity?: IdentitySettings }): Management {
  return {
    async createWorker({ caller, body }) {
      const { worker, generatedPassword } = await createWorker(
        uow,
        {
          ...workforceOf(caller),
          email: body.email,
          displayName: body.display_name,
          roles: body.roles,
          calibrator: body.calibrator ?? false,
          ...(body.password !== undefined ? { password: body.password } : {}),
        },
        identity,
        now(),
      );
      return { ...workerView(worker), ...(generatedPassword ? { initial_password: generatedPassword } : {}) };
    },
    async listWorkers({ caller, query }) {
      const limit = query.limit ?? 100;
      const page = await listWorkers(uow, workforceOf(caller), {
        limit,
        ...(query.status ? { status: query.status } : {}),
        ...(query.next_token ? { nextToken: query.next_token } : {}),
      });
      return {
        docs: page.workers.map(workerView),
        limit,
        has_more: page.hasMore,
        ...(page.nextToken ? { next_token: page.nextToken } : {}),
      };
    },
    async getWorker({ caller, path }) {
      return workerView(await workerOf(uow, workforceOf(caller), path.workerId));
    },
    async updateWorker({ caller, path, body }) {
      return workerView(
        await changeWorker(
          uow,
          workforceOf(caller),
          path.workerId,
          {
            ...(body.display_name !== undefined ? { displayName: body.display_name } : {}),
            ...(body.roles !== undefined ? { roles: body.roles } : {}),
            ...(body.calibrator !== undefined ? { calibrator: body.calibrator } : {}),
          },
          now(),
        ),
      );
    },
    async removeWorker({ caller, path }) {
      return workerView(await removeWorker(uow, workforceOf(caller), path.workerId, now()));
    },
    async pauseWorker({ caller, path }) {
      return workerView(await changeWorker(uow, workforceOf(caller), path.workerId, { status: 'paused' }, now()));
    },
    async unpauseWorker({ caller, path, body }) {
      const accountId = caller.account.accountId;
      const project = body?.project;
      // A worker of the operator's workforce, by the handle the account knows: their standing in
      // the account's project is the account's; their own pause is the operator's (decision 0011).
      if (path.workerId.startsWith('opw_')) {
        // The operator's workforce is live: a test key reaches none of it (decision 0013).
        if (caller.mode !== 'live') throw notFound(`Worker ${path.workerId} not found.`);
        if (project === undefined)
          throw invalid(
            `${path.workerId} is a worker of the operator's workforce: only their standing in one of your projects can be reset (give project).`,
          );
        return { worker: path.workerId, project, state: await resetOperatorStanding(uow, accountId, path.workerId, project, now()) };
      }
      // An unknown project changes nothing, the worker's own pause included. A test-mode worker
      // does no work, so has no standing to reset: a test key's project is only checked.
      if (project !== undefined && !(await uow.projects.get(accountId, caller.mode, project)))
        throw notFound(`Project "${project}" not found.`);
      const worker = await changeWorker(uow, workforceOf(caller), path.workerId, { status: 'active' }, now());
      if (project !== undefined && caller.mode === 'live') await resetStanding(uow, accountId, worker.workerId, project, now());
      return workerView(worker);
    },
    async resetWorkerPassword({ caller, path, body }) {
      const reset = await resetPassword(uow, workforceOf(caller), path.workerId, body?.password, identity, now());
      return {
        worker_id: reset.worker.workerId,
        revoked_tokens: reset.revokedTokens,
        ...(reset.generatedPassword ? { password: reset.generatedPassword } : {}),
      };
    },
  };
}
