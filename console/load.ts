// Loading a screen's data: the answer, or the error to show; again when the inputs change. A lapsed
// session (401) brings the log-in back (main.tsx listens for it).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, messageOf } from './api.ts';

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'failed'; error: string };

export const sessionLapsed = new EventTarget();

export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoaded({ state: 'loading' });
    load().then(
      (value) => current && setLoaded({ state: 'done', value }),
      (err) => {
        if (err instanceof ApiError && err.status === 401) sessionLapsed.dispatchEvent(new Event('lapsed'));
        if (current) setLoaded({ state: 'failed', error: messageOf(err) });
      },
    );
    return () => {
      current = false;
    };
  }, [...inputs, round]);
  return [loaded, () => setRound((r) => r + 1)];
}
