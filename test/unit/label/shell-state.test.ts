// The labeling app's shell state machine (label/shell/state.ts): the transitions it allows, the one it
// refuses, and what a state started being stopped when the next one is entered.
import { describe, expect, it } from 'vitest';
import { ShellMachine } from '../../../label/shell/state.ts';

describe('the shell state machine', () => {
  it('goes the way a worker does: log in, wait, work, lose the lease, wait, review, release, log out', () => {
    const machine = new ShellMachine<string>();
    const seen: string[] = [];
    machine.onChange((s) => seen.push(s.name));
    expect(machine.state.name).toBe('logged-out');
    machine.go({ name: 'waiting', asking: new AbortController() });
    machine.go({ name: 'working', work: 'task 1' });
    expect(machine.work).toBe('task 1');
    expect(machine.is('working', 'reviewing')).toBe(true);
    machine.go({ name: 'lease-lost' });
    expect(machine.work).toBeUndefined();
    machine.go({ name: 'waiting', asking: null });
    machine.go({ name: 'reviewing', work: 'review 2' });
    expect(machine.work).toBe('review 2');
    machine.go({ name: 'idle', view: 'next' });
    machine.go({ name: 'logged-out' });
    expect(seen).toEqual(['waiting', 'working', 'lease-lost', 'waiting', 'reviewing', 'idle', 'logged-out']);
  });

  it('refuses a transition the table does not allow, and stays where it was', () => {
    const machine = new ShellMachine<string>();
    // Logged out, no task opens: the person logs in first.
    expect(() => machine.go({ name: 'working', work: 'task' })).toThrow('The shell cannot go from logged-out to working.');
    expect(machine.state.name).toBe('logged-out');
    machine.go({ name: 'waiting', asking: null });
    machine.go({ name: 'working', work: 'task' });
    // A lost lease is shown over the work it ended; a task opens only after asking for it again.
    machine.go({ name: 'lease-lost' });
    expect(() => machine.go({ name: 'working', work: 'again' })).toThrow('from lease-lost to working');
    expect(() => machine.go({ name: 'lease-lost' })).toThrow('from lease-lost to lease-lost');
  });

  it('stops what a state started when it is left, once: the question in flight, the work session and what was added to it', () => {
    const machine = new ShellMachine<string>();
    const ask = new AbortController();
    const stopped: string[] = [];
    machine.go({ name: 'waiting', asking: ask }, () => ask.abort());
    machine.go({ name: 'working', work: 'task' }, () => stopped.push('work'));
    expect(ask.signal.aborted).toBe(true);
    machine.alsoOnLeave(() => stopped.push('dialog'));
    // leave() ends the session but stays in its state (a screen built before its state is entered).
    machine.leave();
    expect(stopped).toEqual(['dialog', 'work']);
    expect(machine.state.name).toBe('working');
    machine.go({ name: 'idle', view: 'feedback' });
    expect(stopped).toEqual(['dialog', 'work']);
  });
});
