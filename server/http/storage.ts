// Handlers of tag "Storage" (current generation): an account's connections to its buckets, each
// tested against the bucket before it is kept (server/storage/s3.ts).
import { wallClock } from '../domain/clock.ts';
import { DomainError, notFound } from '../domain/errors.ts';
import { newTaskId } from '../domain/ids.ts';
import { recordActivity } from '../domain/identity/activity.ts';
import { bucketScheme } from '../domain/attachments.ts';
import { bucketOrigin, defaultStorageSettings, endpointDefaults, testBucket } from '../storage/s3.ts';
import { requestActivity } from './activity.ts';
import type { HandlerDeps } from './tasks.ts';
import type { OperationRequest, Operations } from './typed.ts';
import { storageConnectionView } from './views/storage.ts';

type Request<Id extends keyof Operations['current']> = OperationRequest<Operations['current'][Id]>;

export function storageHandlers({ uow, storage = defaultStorageSettings, now = wallClock }: HandlerDeps) {
  return {
    async createStorageConnection(request: Request<'createStorageConnection'>) {
      const { body, caller } = request;
      const provider = body.provider ?? 's3';
      const where = endpointDefaults(provider, body.region, body.endpoint);
      const access = {
        provider,
        bucket: body.bucket,
        endpoint: where.endpoint,
        region: where.region,
        pathStyle: body.path_style ?? where.pathStyle,
        accessKeyId: body.access_key_id,
        secretAccessKey: body.secret_access_key,
      };
      const prefix = `${bucketScheme(provider)}://${body.bucket}/`;
      const existing = await uow.storage.forBucket(caller.account.accountId, caller.mode, provider, body.bucket);
      if (existing)
        throw new DomainError('conflict', `This account already has a connection to ${prefix} (${existing.connectionId}).`, 'conflict');
      if ((body.media ?? 'proxy') === 'presigned' && !storage.mediaOrigins.includes(bucketOrigin(access)))
        throw new DomainError(
          'invalid',
          `Workers' browsers cannot load files from ${bucketOrigin(access)}: the labeling app loads files only from the origins ` +
            `STORAGE_MEDIA_ORIGINS lists (${storage.mediaOrigins.length > 0 ? storage.mediaOrigins.join(', ') : 'none on this server'}). ` +
            'Use media "proxy", or ask the operator to add the origin.',
          'storage_media_origin_not_allowed',
        );
      const failure = await testBucket(access, storage);
      if (failure) throw new DomainError('invalid', failure.message, failure.code);
      const at = now();
      const { secretAccessKey, ...shown } = access;
      const connection = {
        ...shown,
        connectionId: `stc_${newTaskId(at)}`,
        accountId: caller.account.accountId,
        mode: caller.mode,
        media: body.media ?? 'proxy',
        createdAt: at,
      };
      // Kept and logged in one transaction, after the bucket's test (which holds none).
      const kept = await uow.transaction(async (repos) => {
        if (!(await repos.storage.insert(connection, secretAccessKey))) return false;
        const target = { type: 'storage_connection', id: connection.connectionId };
        await recordActivity(repos, requestActivity(request, 'storage_connection.created', target, at));
        return true;
      });
      if (!kept) {
        const other = await uow.storage.forBucket(caller.account.accountId, caller.mode, provider, body.bucket);
        throw new DomainError(
          'conflict',
          `This account already has a connection to ${prefix} (${other?.connectionId ?? 'made just now'}).`,
          'conflict',
        );
      }
      return storageConnectionView(connection);
    },
    listStorageConnections: async ({ caller }: Request<'listStorageConnections'>) => ({
      connections: (await uow.storage.list(caller.account.accountId, caller.mode)).map(storageConnectionView),
    }),
    async getStorageConnection({ path, caller }: Request<'getStorageConnection'>) {
      const found = await uow.storage.get(caller.account.accountId, caller.mode, path.connectionId);
      if (!found) throw notFound(`Storage connection ${path.connectionId} not found.`);
      return storageConnectionView(found);
    },
    async deleteStorageConnection({ path, caller }: Request<'deleteStorageConnection'>) {
      const gone = await uow.storage.delete(caller.account.accountId, caller.mode, path.connectionId);
      if (!gone) throw notFound(`Storage connection ${path.connectionId} not found.`);
      return storageConnectionView(gone);
    },
  };
}
