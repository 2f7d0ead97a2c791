// Small pieces every screen uses: a screen's heading (focused when the screen opens), a link inside
// the app, the states of loading, and dates as people read them.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { Loaded } from './load.ts';
import { follow, href, type Route } from './route.ts';

export function Heading({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
    document.title = `${ref.current?.textContent ?? ''} — humantask console`;
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

export function Link({ href, children, current }: { href: string; children: ComponentChildren; current?: 'page' | undefined }) {
  return (
    <a href={href} onClick={follow} aria-current={current}>
      {children}
    </a>
  );
}

/** A refusal or failure of what the member just did, read out at once; nothing when there is none. */
export function Problem({ error }: { error: string | null }) {
  return error ? (
    <p class="notice bad" role="alert">
      {error}
    </p>
  ) : null;
}

/** What came of an action (done, or refused), as a status line; nothing when there is none. */
export interface Said {
  kind: 'good' | 'bad' | 'warn';
  text: string;
}

export function Notice({ notice }: { notice: Said | null }) {
  return notice ? (
    <p class={`notice ${notice.kind}`} role="status">
      {notice.text}
    </p>
  ) : null;
}

/** What a load shows until it is done: a status line, or the error. */
export function Pending<T>({ loaded, children }: { loaded: Loaded<T>; children(value: T): ComponentChildren }) {
  if (loaded.state === 'loading') return <p role="status">Loading…</p>;
  if (loaded.state === 'failed')
    return (
      <p class="notice bad" role="alert">
        {loaded.error}
      </p>
    );
  return <>{children(loaded.value)}</>;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export const when = (iso: string | null | undefined) => (iso ? dateTime.format(new Date(iso)) : '—');

/**
 * The links between pages of a list that follows `next_token` (kept in the address with the
 * screen's filters): back to the first page once past it, on to the next while there is one.
 */
export function Pager({ route, screen, next }: { route: Route; screen: string; next: string | null | undefined }) {
  const withToken = (token: string | null) => {
    const query = new URLSearchParams(route.query);
    if (token) query.set('next_token', token);
    else query.delete('next_token');
    return href(screen, query);
  };
  return (
    <div class="actions spaced">
      {route.query.get('next_token') && <Link href={withToken(null)}>First page</Link>}
      {next && <Link href={withToken(next)}>Next page</Link>}
    </div>
  );
}
