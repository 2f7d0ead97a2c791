// Failures the rules can produce. The HTTP layer maps each kind to a status (per generation where
// the generations differ), and its message is what the client reads.
export type DomainErrorKind =
  | 'invalid' //          400: a parameter is missing or wrong (the message names it)
  | 'not_found' //        404: no such object for this account and mode
  | 'forbidden' //        403: the caller may not do this (a worker without the role it needs)
  | 'conflict' //         409: unique_id taken, Idempotency-Key reused
  | 'type_disabled' //    402: the task type is not enabled for the account
  | 'cancel_completed'; // a completed task cannot be canceled: 400 (current) or 500 (older)

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** A stable name for programs (the worker API's `code`: `email_taken`, `lease_lost`, ...). */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (message: string) => new DomainError('invalid', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const conflict = (message: string) => new DomainError('conflict', message);
