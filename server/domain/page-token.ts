// next_token of the lists that page by position (tasks, workers, the activity log, callbacks): the
// position of the page's last row (its time and id, and for tasks the running count up to it), bound
// to the query by a hash of what it names (the account, the mode, every filter), so that a token is
// refused anywhere else. Rows written during a walk sort before its position and change nothing.
import { sha256 } from './ids.ts';
import { invalid } from './errors.ts';

/** The binding of a query: a short hash of everything the query names. */
export const queryBinding = (parts: unknown[]): string => sha256(JSON.stringify(parts)).slice(0, 16);

export interface Position {
  at: Date;
  id: string;
  /** The rows up to and with this one (the task list's running count); absent when not kept. */
  count?: number | undefined;
}

export function positionToken(position: Position, binding: string): string {
  const { at, id, count } = position;
  return Buffer.from(JSON.stringify({ c: at.getTime(), i: id, ...(count === undefined ? {} : { o: count }), b: binding })).toString(
    'base64url',
  );
}

/** The position a token names, or 400: not a token of this API (`id` names the list's ids), or of another query. */
export function readPositionToken(token: string, binding: string, id: RegExp): Position {
  let decoded: { c?: unknown; i?: unknown; o?: unknown; b?: unknown } = {};
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    // not a token: refused below
  }
  if (typeof decoded.c !== 'number' || typeof decoded.i !== 'string' || !id.test(decoded.i))
    throw invalid('next_token is not a token of this API.');
  if (decoded.b !== binding) throw invalid('next_token belongs to another query: repeat the request with the same filters and credential.');
  const count = Number.isSafeInteger(decoded.o) && (decoded.o as number) >= 0 ? (decoded.o as number) : undefined;
  return { at: new Date(decoded.c), id: decoded.i, count };
}
