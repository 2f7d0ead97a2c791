// Work that runs when a handler ends its answer, before the answer leaves: a password-hash turn
// released (hashing.ts), a live request counted first (auth.ts). Express has no hook between a
// handler's `res.end` and the socket, so `end` is wrapped, here only: the two assertions give the
// wrapper `end`'s overloaded type, which a plain function cannot spell.
import type { Response } from 'express';

/** Calls `intercept` when the answer is ended, with the real end to call now or later. */
export function whenAnswerEnds(res: Response, intercept: (end: () => void) => void): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    intercept(() => end(...args));
    return res;
  }) as Response['end'];
}
