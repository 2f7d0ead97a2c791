// The wire shape of a storage connection (tag "Storage"): never its secret key.
import type { components } from '../../../generated/current.ts';
import type { StorageConnection } from '../../domain/ports.ts';
import { bucketScheme } from '../../domain/attachments.ts';

type Schemas = components['schemas'];

export function storageConnectionView(c: StorageConnection): Schemas['StorageConnection'] {
  return {
    connection_id: c.connectionId,
    provider: c.provider,
    bucket: c.bucket,
    url_prefix: `${bucketScheme(c.provider)}://${c.bucket}/`,
    endpoint: c.endpoint,
    region: c.region,
    path_style: c.pathStyle,
    access_key_id: c.accessKeyId,
    media: c.media,
    created_at: c.createdAt.toISOString(),
  };
}
