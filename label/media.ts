// Where the app loads a task's files from: the worker API's media route of the assignment
// (`/worker/v1/assignments/{id}/media?url=...&lease_token=...`), never the customer's host, so that
// no host learns a worker's address (the page's CSP allows images and media from its own origin
// only). The server fetches the file through its guard, and passes on only URLs of that task while
// the lease holds. Files of the app's own origin, data: and blob: URLs are loaded as they are.

/** What a player calls for every file it loads (PlayerContext.media): the address to load it from. */
export type MediaAddress = (url: string) => string;

/** The media route of one assignment, opened by its lease token (the route's credential). */
export function mediaThroughServer(assignmentId: string, leaseToken: string): MediaAddress {
  const route = (url: string) =>
    `${location.origin}/worker/v1/assignments/${encodeURIComponent(assignmentId)}/media?${new URLSearchParams({ url, lease_token: leaseToken })}`;
  return (url) => {
    // An object of the customer's bucket, as the task names it: the server reads it with the
    // account's keys (or answers with a link signed for this lease), so it goes as it is written.
    if (/^(s3|gs):\/\//i.test(url)) return route(url);
    let u: URL;
    try {
      u = new URL(url, location.href);
    } catch {
      return url;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin === location.origin) return url;
    return route(u.href);
  };
}
