// The URL is the console's state (decision 23): the screen is the path under /console/, its filters
// and choices the query, the mode `mode=live` (absent: test). A link shows the same view; the back
// button goes back a view. Links inside the app change the URL with the History API and redraw.
import { useEffect, useState } from 'preact/hooks';
import type { Mode } from './api.ts';

const base = '/console';

export interface Route {
  /** The path under /console/, without its leading and trailing slash ('' for the overview). */
  path: string;
  query: URLSearchParams;
  mode: Mode;
}

export function currentRoute(): Route {
  const path = location.pathname.startsWith(`${base}/`) ? location.pathname.slice(base.length + 1).replace(/\/+$/, '') : '';
  const query = new URLSearchParams(location.search);
  return { path, query, mode: query.get('mode') === 'live' ? 'live' : 'test' };
}

/** The address of a screen, keeping the mode unless it is given. */
export function href(path: string, query: Record<string, string | string[] | undefined> | URLSearchParams = {}, mode?: Mode): string {
  const q = new URLSearchParams();
  const entries = query instanceof URLSearchParams ? [...query] : Object.entries(query);
  for (const [name, value] of entries) {
    if (name === 'mode' || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) if (v !== '') q.append(name, v);
  }
  if ((mode ?? currentRoute().mode) === 'live') q.set('mode', 'live');
  const s = q.toString();
  return `${base}/${path}${s ? `?${s}` : ''}`;
}

const listeners = new Set<() => void>();
addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** Goes to an address of the app (a new history entry, or in place of the current one). */
export function navigate(to: string, replace = false) {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
}

/** The current route, redrawn when the URL changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return route;
}

/**
 * A link inside the app: a real <a href> (it opens in a new tab, can be copied), which a plain
 * click follows without reloading the page.
 */
export function follow(e: MouseEvent) {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute('href') ?? `${base}/`);
}
