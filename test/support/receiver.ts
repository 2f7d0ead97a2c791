// A callback receiver for tests: a real HTTP server on 127.0.0.1 that records every request it gets
// (headers, body, the status it answered) and answers with a status of the test's choosing.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { until } from './wait.ts';

export interface Received {
  /** performance.now() when the body had arrived. */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (undefined if it is not JSON). */
  json: any;
  /** The status the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  /** Every request, in the order they arrived. */
  received: Received[];
  /** The requests per `task_id` of their JSON body. */
  byTask: Map<string, Received[]>;
  /** The JSON bodies received for a task, in order. */
  bodiesOf(taskId: string): any[];
  /** The status of the next answers: a number, or one of the request's 1-based number. */
  answer: number | ((n: number) => number);
  /** Waits until `n` requests have arrived, or until `done(received)` holds; the requests. */
  waitFor(n: number | ((received: Received[]) => boolean), what?: string, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver (on `port`, or a free one) answering `answer` (200 unless told). */
export async function startReceiver(answer: Receiver['answer'] = 200, port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const byTask = new Map<string, Received[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let json: any;
      try {
        json = JSON.parse(body);
      } catch {}
      const status = typeof hook.answer === 'number' ? hook.answer : hook.answer(received.length + 1);
      const one: Received = { at: performance.now(), headers: req.headers, body, json, status };
      received.push(one);
      if (typeof json?.task_id === 'string') {
        const ofTask = byTask.get(json.task_id) ?? [];
        ofTask.push(one);
        byTask.set(json.task_id, ofTask);
      }
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const hook: Receiver = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    received,
    byTask,
    answer,
    bodiesOf: (taskId) => (byTask.get(taskId) ?? []).map((r) => r.json),
    async waitFor(n, what, ms) {
      const done = typeof n === 'number' ? () => received.length >= n : () => n(received);
      await until(done, what ?? (typeof n === 'number' ? `${n} callbacks` : 'the callbacks'), ms);
      return received;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return hook;
}
