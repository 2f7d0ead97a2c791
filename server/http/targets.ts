// Callback and attachment URLs that point into our own network are refused at creation (400), not
// only at delivery, when private networks are not allowed (ALLOW_PRIVATE_NETWORKS). Without DNS:
// a literal IP address (in any spelling the URL parser normalizes: 2130706433, 0x7f.1, [::1]) and
// the `localhost` names. A name that resolves to such an address is refused when it is fetched
// (delivery/net.ts), whatever it resolved to at creation: DNS answers change.
import { isRecord } from '../../shared/json.ts';
import { isIP } from 'node:net';
import type { RequestHandler } from 'express';
import { attachmentUrls } from '../domain/attachments.ts';
import type { Json } from '../domain/model.ts';
import { refusalReason } from '../delivery/net.ts';
import { HttpError } from './errors.ts';

/**
 * An http(s) URL whose host is plainly a DNS name: letters, digits and hyphens in dotted labels, the
 * last beginning with a letter (the URL parser reads a host as an IPv4 address only when its last
 * label is a number), then a port, path, query or fragment. Nothing else (user info, a trailing dot,
 * escapes, spaces) matches: those take the parser's way.
 */
const plainName = /^https?:\/\/((?:[a-z0-9-]+\.)*([a-z][a-z0-9-]*))(?::[0-9]{1,5})?(?:[/?#]|$)/i;

/** Why a request to `target` is refused whatever DNS says, or null. */
function literalTargetRefusal(target: string, allowPrivateNetworks: readonly string[]): string | null {
  // Most targets are names: no URL parse for them (a name is checked when it is fetched).
  const name = plainName.exec(target);
  if (name && name[2]!.toLowerCase() !== 'localhost') return null;
  let hostname: string;
  try {
    const url = new URL(target);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    hostname = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return null;
  }
  if (hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === 'localhost.') {
    return ['127.0.0.1', '::1'].every((a) => refusalReason(a, allowPrivateNetworks) !== null) ? 'not a public address' : null;
  }
  if (!isIP(hostname)) return null;
  return refusalReason(hostname, allowPrivateNetworks) !== null ? 'not a public address' : null;
}

/** Why a task creation body's callback or attachment URL is refused (a private address), or null. */
export function privateTargetProblem(body: Json, kind: 'task' | 'batch', allowPrivateNetworks: readonly string[]): string | null {
  const targets: [string, unknown][] =
    kind === 'batch'
      ? [['callback', body.callback]]
      : [['callback_url', body.callback_url], ...attachmentUrls(body).map((u): [string, unknown] => ['attachment', u])];
  for (const [field, value] of targets) {
    const why = typeof value === 'string' ? literalTargetRefusal(value, allowPrivateNetworks) : null;
    if (why) return `${field} ${value} points to ${why} (private networks are not allowed on this server).`;
  }
  return null;
}

/** On the creations `fieldsOf` names: the callback and attachment URLs of the body, checked. */
export function refusePrivateTargets(
  allowPrivateNetworks: readonly string[],
  fieldsOf: (path: string) => 'task' | 'batch' | null,
): RequestHandler {
  return (req, _res, next) => {
    const kind = req.method === 'POST' ? fieldsOf(req.path) : null;
    const body: unknown = req.body;
    if (!kind || !isRecord(body)) return next();
    const problem = privateTargetProblem(body, kind, allowPrivateNetworks);
    next(problem ? new HttpError(400, problem) : undefined);
  };
}
