// Password hashing on a request's path (a worker's log-in, an account creating a worker or
// resetting a password) waits for its turn at the hash gate (domain/workforce/passwords.ts): a
// subject with as many hashes in progress as allowed gets 429, a full queue 503, both at once and
// with Retry-After. The turn is held until the handler answers (its hash done), even when the client
// went away meanwhile: closing the connection frees no thread. A client that leaves while waiting
// gives up its place.
import type { Request, RequestHandler, Response } from 'express';
import type { HashGate } from '../domain/workforce/passwords.ts';
import { whenAnswerEnds } from './answer-end.ts';
import { HttpError } from './errors.ts';

export function passwordHashing(gate: HashGate, subjectsOf: (req: Request, res: Response) => string[]): RequestHandler {
  return (req, res, next) => {
    const ticket = gate.admit(subjectsOf(req, res));
    if (ticket === 'subject')
      return next(
        new HttpError(
          429,
          'Too many passwords being checked for this client at once; retry after 1 second.',
          { 'Retry-After': '1' },
          'rate_limited',
        ),
      );
    if (ticket === 'full')
      return next(
        new HttpError(503, 'The server is checking as many passwords as it can; retry after 1 second.', { 'Retry-After': '1' }, 'busy'),
      );
    let started = false;
    whenAnswerEnds(res, (end) => {
      ticket.release();
      end();
    });
    res.once('close', () => {
      if (!started) ticket.release();
    });
    ticket.ready.then(() => {
      // Gone while waiting: nothing to hash.
      if (res.closed) return ticket.release();
      started = true;
      next();
    }, next);
  };
}
