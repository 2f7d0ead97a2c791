// My history and my figures: the worker's own assignments, newest first (`GET /v1/assignments`,
// a page at a time), each with its task, role, status, active time, the review's result and
// remarks, and a training answer's score; and the figures of `GET /v1/stats` (the last 30 days):
// counts, active time, and per project (of an account) the training standing and rolling accuracy.
import type { Api, Assignment, FeedbackItem, WorkerStats } from './api.ts';
import { categoryNames, scopeName } from './feedback.ts';
import { el } from './players/types.ts';

const seconds = (ms: number) => {
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s} s`
    : s < 3600
      ? `${Math.floor(s / 60)} min ${s % 60} s`
      : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
};
const when = (iso: string) => new Date(iso).toLocaleString();
const percent = (v: number) => `${Math.round(v * 100)} %`;

const countNames: [keyof WorkerStats['counts'], string][] = [
  ['issued', 'Issued'],
  ['submitted', 'Submitted'],
  ['accepted', 'Accepted'],
  ['fixed', 'Fixed by a reviewer'],
  ['rejected', 'Rejected'],
  ['skipped', 'Skipped'],
  ['released', 'Released'],
  ['expired', 'Expired'],
  ['reviews', 'Reviews decided'],
];

/**
 * A project's name, and where two accounts' projects have that name (a worker of the operator's
 * workforce), a short form of the account's handle to tell them apart.
 */
function projectName(p: WorkerStats['projects'][number], all: WorkerStats['projects']): (string | HTMLElement)[] {
  const name = p.project || '(no project)';
  if (all.filter((q) => q.project === p.project).length < 2) return [name];
  return [name, el('span', { class: 'muted', title: p.account }, ` · account ${p.account.slice(4, 10)}`)];
}

function statsView(stats: WorkerStats): HTMLElement {
  const c = stats.counts;
  return el(
    'section',
    { class: 'panel stats', 'aria-labelledby': 'stats-title', id: 'stats' },
    el('h2', { id: 'stats-title' }, `My figures since ${new Date(stats.since).toLocaleDateString()}`),
    el(
      'dl',
      { class: 'meters' },
      ...countNames.flatMap(([k, name]) => [el('dt', {}, name), el('dd', { 'data-count': k }, String(c[k]))]),
      el('dt', {}, 'Active time'),
      el('dd', { 'data-count': 'active_ms' }, seconds(stats.active_ms)),
      ...(stats.median_active_ms !== undefined ? [el('dt', {}, 'Median per answer'), el('dd', {}, seconds(stats.median_active_ms))] : []),
    ),
    stats.projects.length
      ? el(
          'table',
          { class: 'history' },
          el('caption', {}, 'By project'),
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ...['Project', 'Submitted', 'Accepted', 'Rejected', 'Active time', 'Training', 'Accuracy'].map((h) =>
                el('th', { scope: 'col' }, h),
              ),
            ),
          ),
          el(
            'tbody',
            {},
            ...stats.projects.map((p) =>
              el(
                'tr',
                { 'data-account': p.account },
                el('td', {}, ...projectName(p, stats.projects)),
                el('td', {}, String(p.counts.submitted)),
                el('td', {}, String(p.counts.accepted)),
                el('td', {}, String(p.counts.rejected)),
                el('td', {}, seconds(p.active_ms)),
                el('td', {}, p.training ? `${p.training.state} (${p.training.scored}/${p.training.required})` : '—'),
                el('td', {}, p.accuracy ? `${percent(p.accuracy.value)} of ${p.accuracy.scored}` : '—'),
              ),
            ),
          ),
        )
      : el('p', { class: 'muted' }, 'No project yet.'),
  );
}

function historyRow(a: Assignment): HTMLElement {
  const remarks = (items: FeedbackItem[]) =>
    items.map((f) => el('div', { class: 'muted' }, `${categoryNames[f.category]} — ${scopeName(f.scope, undefined)}: ${f.text}`));
  // A redo carries the rejection it answers (`feedback`); its own review's result follows.
  const outcome = el(
    'div',
    {},
    ...(a.feedback ? [el('div', {}, 'After a rejection:'), ...remarks(a.feedback.feedback_items)] : []),
    ...(a.review ? [el('strong', {}, a.review.result), ...(a.role === 'redo' ? [] : remarks(a.review.feedback_items))] : []),
    ...(a.training?.feedback
      ? [el('div', {}, `training score ${percent(a.training.feedback.score)}${a.training.feedback.passed ? ', passed' : ''}`)]
      : []),
    ...(a.skip_reason ? [el('div', { class: 'muted' }, `skipped: ${a.skip_reason}`)] : []),
  );
  return el(
    'tr',
    { 'data-assignment': a.assignment_id },
    el('td', {}, when(a.created_at)),
    el('td', {}, a.task.type, el('div', { class: 'muted' }, a.task.project ?? a.task.task_id)),
    el('td', {}, a.role),
    el('td', {}, a.status),
    el('td', {}, seconds(a.active_ms)),
    el('td', {}, outcome),
  );
}

/** Shows my figures and my history in `container`; `back` returns to the work. */
export async function showHistory(container: HTMLElement, api: Api, back: HTMLElement): Promise<void> {
  const body = el('tbody');
  const more = el('button', { type: 'button', hidden: '' }, 'Show older');
  const table = el(
    'table',
    { class: 'history', id: 'history' },
    el('caption', {}, 'My assignments, newest first'),
    el(
      'thead',
      {},
      el('tr', {}, ...['Issued', 'Task', 'Role', 'Status', 'Active time', 'Outcome'].map((h) => el('th', { scope: 'col' }, h))),
    ),
    body,
  );
  const statsBox = el('div', {}, el('p', { class: 'muted' }, 'Loading my figures…'));
  container.replaceChildren(
    el(
      'div',
      { class: 'history-view' },
      el('h2', {}, 'My history and figures'),
      back,
      statsBox,
      el('section', { class: 'panel' }, table, more),
    ),
  );
  let token: string | undefined;
  const page = async () => {
    const list = await api.history(token);
    body.append(...list.docs.map(historyRow));
    token = list.next_token;
    more.hidden = !list.has_more;
    if (!body.children.length) body.append(el('tr', {}, el('td', { colspan: '6' }, 'Nothing yet.')));
  };
  more.addEventListener('click', () => void page());
  const [stats] = await Promise.all([api.stats(), page()]);
  statsBox.replaceChildren(statsView(stats));
}
