// The console at /console/ (issue 35, decision 23): the customer's members' web app. console/public/
// as it is, and console/main.tsx (Preact, TSX) bundled into /console/app.js, made and served as every
// browser app of ours is (server/browser-app.ts: built at pack time into dist/console/ for the
// package, in memory on the first request in a clone; compressed, cached, under one policy). Every
// path under /console/ that is no file is the page: the app routes by the URL (History API).
//
// What a role may do is read from the contract, not written twice: the bundle carries, per operation,
// the least role of its `x-access` (the access table of server/http/access.ts), so that the console
// offers only what the member may call. The server refuses the rest anyway.
import type { Router } from 'express';
import { browserApp, type BrowserApp } from './browser-app.ts';
import { roles } from './domain/identity/roles.ts';
import { accessTable } from './http/access.ts';
import { loadContract } from './http/contract.ts';

/** The roles from the lowest, and per operation of the current generation the least role that may call it (public: null). */
function consoleAccess(): { roles: readonly string[]; operations: Record<string, string | null> } {
  const table = accessTable(loadContract('current'));
  return { roles, operations: Object.fromEntries([...table.byId].map(([id, op]) => [id, op.access.public ? null : op.access.role])) };
}

export const consoleBuild: BrowserApp = {
  name: 'console',
  entry: 'main.tsx',
  title: 'The console',
  options: () => ({
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { HUMANTASK_ACCESS: JSON.stringify(consoleAccess()) },
  }),
  pagesByUrl: true,
};

/**
 * The console. Its policy lets it load files from its own origin only, without the buckets of
 * STORAGE_MEDIA_ORIGINS the labeling app may load from: none of its screens shows a customer's file
 * yet (log-in, home, members, sessions and the data manager show the API's JSON). The task view, which
 * will draw a task's files with the labeling app's players, adds them when its media route redirects
 * to a bucket as the workers' does (decision 23); until then a page that holds a member's session
 * sends nothing to another origin.
 */
export function consoleApp(): Router {
  return browserApp(consoleBuild);
}
