// A fresh account for workforce tests (its own workers see only its tasks), with a project to work in.
import { expect } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { client, type TestServer } from './server.ts';

/**
 * A fresh account named `name` with a categorization project `pets` (under the quality `policy`, if
 * given); its live client and a maker of its live tasks, each calling back to `callbackUrl`.
 */
export async function petsAccount(server: TestServer, name: string, callbackUrl: string, policy?: Record<string, unknown>) {
  const secrets = await createAccount(server.uow, name, new Date());
  const live = client(server, 'current', secrets.live_key);
  expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'pets' } })).status).toBe(200);
  if (policy) {
    const put = await live('PUT', '/v1/projects/pets/quality_policy', { json: policy });
    expect(put.status, put.text).toBe(200);
  }
  const newTask = async () => {
    const r = await live('POST', '/v1/task/categorization', {
      json: {
        project: 'pets',
        callback_url: callbackUrl,
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 'a cat',
        categories: ['cat', 'dog', 'fish'],
      },
    });
    expect(r.status, r.text).toBe(200);
    return r.body.task_id as string;
  };
  return { secrets, live, newTask };
}
