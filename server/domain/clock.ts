// The clock that what lapses is decided by: worker sessions, Idempotency-Keys, assignment leases
// (and the callbacks a submit queues, which the dispatcher must find due on the same clock). The
// server reads the wall clock; a test moves a clock of its own on instead of waiting for one to lapse
// (test/support/clock.ts).
export type Clock = () => Date;

export const wallClock: Clock = () => new Date();
