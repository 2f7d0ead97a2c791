// The unit of work of a process that writes tasks (the server, the CLI's store commands): the
// callbacks it queues show a response's files as links, and the files are written outside any
// transaction once their task is (decision record 24). One construction, so that no way of
// completing a task queues a callback with the bulk in it or leaves its files unwritten.
import type { Config } from '../config.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import { callbackPayloadsShowing } from '../http/views/callbacks.ts';
import type { Store } from '../store/db.ts';
import { unitOfWork } from '../store/repositories.ts';
import { resultLinks, resultWriter, type ResultLinks } from './files.ts';

export function resultsUnitOfWork(
  store: Store,
  config: Pick<Config, 'results' | 'storage' | 'delivery'>,
  /** Where the links point: PUBLIC_URL, else where the server listens. */
  baseUrl: () => string,
  now: () => Date,
  warn: (message: string) => void,
): { uow: UnitOfWork; links: ResultLinks } {
  const links = resultLinks(config.results, (purpose, message) => store.secrets.sign(purpose, message), baseUrl, now);
  const net = { ...config.storage, allowPrivateNetworks: config.delivery.allowPrivateNetworks };
  return { uow: unitOfWork(store, callbackPayloadsShowing(links.show), resultWriter(config.results, net, warn)), links };
}
