// When the lease on the task ends (lost, the task canceled, the assignment closed): the work stays
// shown but inert, kept in this browser for when the task comes back here, and offered as a file.
import type { ApiError } from '../api.ts';
import { el } from '../players/types.ts';
import { main } from './ui.ts';
import { lostWorkKey, type Work } from './work.ts';

export function showLeaseLost(w: Work, err: ApiError, notices: HTMLElement, next: HTMLButtonElement): void {
  const what =
    err.code === 'task_canceled'
      ? 'The customer canceled this task.'
      : err.code === 'assignment_closed'
        ? 'This assignment is already closed.'
        : 'Your lease on this task was lost: the task may be with another worker now.';
  // The work as it is now (also what was done after the last heartbeat): kept in this browser for
  // when the task comes back here, and offered as a file.
  const saved = JSON.stringify(w.draft());
  if (w.assignment.role !== 'review') localStorage.setItem(lostWorkKey(w.assignment.task.task_id), saved);
  const download = el(
    'a',
    {
      class: 'button',
      id: 'download-work',
      href: URL.createObjectURL(new Blob([saved], { type: 'application/json' })),
      download: `task-${w.assignment.task.task_id}-my-work.json`,
    },
    'Download my work',
  );
  notices.replaceChildren(
    el(
      'div',
      { class: 'notice bad', role: 'alert', id: 'lease-lost' },
      el('strong', {}, what),
      ' ',
      err.message,
      ' Your work on it cannot be saved or submitted any more. It stays shown here, and in this browser: if the task comes back to you here, it opens with this work. Download it to keep a copy.',
    ),
    download,
    ' ',
    next,
  );
  main.querySelector('.player')?.setAttribute('inert', '');
  const lease = main.querySelector('#lease');
  if (lease) lease.textContent = 'lost';
  main.querySelectorAll<HTMLButtonElement>('.actions button').forEach((b) => {
    b.disabled = true;
  });
}
