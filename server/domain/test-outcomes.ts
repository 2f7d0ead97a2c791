// Test mode as a sandbox (decision 19): a test-mode task may choose how it ends, as payment
// sandboxes choose with test card numbers, by one metadata key. Live mode never reads the key (it
// is metadata like any other there), so nothing chosen here can change live behaviour.
import type { Json } from './model.ts';

/** The metadata key a test-mode task chooses its outcome with. */
const testOutcomeKey = 'test_outcome';

/** The longest delay a test-mode task may choose: a day. */
const maxDelayMs = 86_400_000;

export type TestOutcome =
  /** Completed at once with a synthetic response (what happens without the key). */
  | { kind: 'completed' }
  /** Ends at once in `error`, its response `{error}`, its callback sent. */
  | { kind: 'error' }
  /** Stays pending until it is canceled (no callback). */
  | { kind: 'pending' }
  /** Completed `ms` milliseconds after its creation (on the server's clock). */
  | { kind: 'delayed'; ms: number };

const described = '"completed", "error", "pending" or "delayed:<milliseconds>" (1 to 86400000)';

/** The outcome a task's metadata chooses (none chosen: `completed`), or what is wrong with the choice. */
export function testOutcomeOf(metadata: Json): TestOutcome | { problem: string } {
  const value = metadata[testOutcomeKey];
  if (value === undefined) return { kind: 'completed' };
  if (value === 'completed' || value === 'error' || value === 'pending') return { kind: value };
  const delayed = typeof value === 'string' ? /^delayed:([1-9][0-9]{0,7})$/.exec(value) : null;
  if (delayed && Number(delayed[1]) <= maxDelayMs) return { kind: 'delayed', ms: Number(delayed[1]) };
  return { problem: `metadata.${testOutcomeKey} must be ${described} in test mode, not ${JSON.stringify(value)}.` };
}

/** The response of a task whose chosen outcome is `error`. */
export const chosenErrorResponse = { error: `The test outcome "error" was chosen (metadata.${testOutcomeKey}).` };
