// A simulated workforce (issue 19), shared by test/server/quality-simulation.test.ts and
// bench/quality-sim.ts (the chart in docs/quality.md): scripted workers of known care work a
// project of live imageannotation tasks through the real worker API of a running server, with
// training, hidden evaluation and overlap, while a loopback receiver takes the customer's
// callbacks. Everything the workers do is drawn from seeds, and they take turns (one request at
// a time, in a scripted order), so a run replays exactly when the server's own draws are seeded
// too (startServer's `random`, see simulationRandom).
//
// Boxes (imageannotation with one box geometry): their scorer and combiner are cheap (a few boxes
// an answer, Hungarian matching on IoU), and unlike categorization their answers are graded, so
// consensus has something to average.
import { createServer, type Server } from 'node:http';
import { createAccount } from '../../server/domain/accounts.ts';
import type { UnitOfWork } from '../../server/domain/ports.ts';
import { scoreAnswers } from '../../server/domain/quality/score.ts';
import { syntheticResponse } from '../../server/domain/synthetic.ts';
import { SeededRandom } from '../../server/domain/synthetic/random.ts';
import { basicAuth } from './net.ts';
import { bearer, createWorker } from './workers.ts';

type Json = Record<string, any>;

/** A scripted worker: how it draws each object, and how often it asks for work. */
export interface SimulatedWorker {
  name: string;
  /** The chance that it draws an object of the truth (with `jitter`) rather than a box of a made-up answer. */
  care: number;
  /** How far its box edges stray, as a share of the box's size (the spread of a bell curve). */
  jitter: number;
  /** Careful on training tasks (which say they are training), at `care` on everything else. */
  slacker: boolean;
  /** Assignments asked for each round: careless workers are quick. */
  pace: number;
}

/**
 * 16 careful workers (care 0.9 to 0.99) and 4 slackers who pass training and then draw only a
 * third of the objects right, twice as fast.
 */
const defaultWorkforce: SimulatedWorker[] = [
  ...Array.from({ length: 16 }, (_, i) => ({
    name: `w${String(i + 1).padStart(2, '0')}`,
    care: Math.round((0.99 - (i % 8) * 0.0125) * 1000) / 1000,
    jitter: i < 8 ? 0.02 : 0.035,
    slacker: false,
    pace: 1,
  })),
  ...[0.25, 0.3, 0.35, 0.4].map((care, i) => ({ name: `s${i + 1}`, care, jitter: 0.05, slacker: true, pace: 2 })),
];

/** The project's quality policy in the simulation (PUT /v1/projects/{projectName}/quality_policy). */
export const simulationPolicy = {
  overlap: 3,
  training: { required: 3, pass_score: 0.7, retry_after_s: 0, max_tries: 3 },
  evaluation: { rate_new: 0.1, rate_trusted: 0.1, window: 20, min_scored: 3, pause_below: 0.6 },
  consensus: { threshold: 0.6, max_extra: 2 },
};

export interface SimulationOptions {
  seed?: number;
  /** Live tasks (200). */
  tasks?: number;
  /** Evaluation tasks (20: a worker gets each at most once). */
  evaluationTasks?: number;
  workers?: SimulatedWorker[];
}

export interface WorkerOutcome extends SimulatedWorker {
  workerId: string;
  /** Live answers submitted, with their task. */
  live: { taskId: string; response: Json }[];
  /** Evaluation scores by the scorer against the expected answers, in submit order. */
  evaluationScores: number[];
  trainingScores: number[];
  /** Mean score of its live answers against the truth (what the simulation knows). */
  trueAccuracy: number;
  /** Mean score of its answers against the other answers of the same tasks (those the server combined last). */
  agreement: number | null;
}

export interface TaskOutcome {
  taskId: string;
  params: Json;
  truth: Json;
  /** The answers the server combined last (rejected ones left out), with their worker's name. */
  answers: { worker: string; response: Json }[];
  /** The completed task's response, as the callback brought it. */
  completed: Json;
  /** Its score against the truth. */
  completedScore: number;
  /** Mean pairwise score of `answers` (the task's agreement). */
  agreement: number;
}

export interface SimulationResult {
  workers: WorkerOutcome[];
  tasks: TaskOutcome[];
  /** Mean score against the truth: every live answer submitted, and every completed task's response. */
  singleMean: number;
  completedMean: number;
  /** Reviews the reviewer took (tasks whose answers still disagreed after the extra workers). */
  reviews: number;
  /** Callbacks the receiver took (a task's callback is sent again only when it fails). */
  callbacks: number;
  /** GET /v1/projects/{projectName}/quality at the end. */
  figures: Json;
  /** Rounds of the scripted turns until no one got work. */
  rounds: number;
  /** Requests to the worker API. */
  workerRequests: number;
  /** Milliseconds spent making the tasks, working them, and waiting for the callbacks after. */
  ms: { create: number; work: number; callbacks: number };
}

const PROJECT = 'sim';
const LABELS = ['car', 'person', 'bicycle'];
const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length);

/** The server's draws for a run (hidden evaluation): startServer's `random`, seeded. */
export function simulationRandom(seed = 19): () => number {
  const rng = new SeededRandom(`server:${seed}`);
  return () => rng.next();
}

const paramsOf = (name: string): Json => ({
  attachment: `https://example.com/sim/${name}.jpg`,
  attachment_type: 'image',
  geometries: { box: { objects_to_annotate: LABELS } },
});

/** The truth of a task: a synthetic answer (test mode's generator) for its params. */
const truthOf = (params: Json, seed: string): Json => syntheticResponse('imageannotation', params, seed);

/** A bell-shaped draw with spread 1 (the sum of three uniform draws, rescaled). */
const bell = (rng: SeededRandom) => (rng.next() + rng.next() + rng.next() - 1.5) * 2;

/**
 * The worker's answer: each object of the truth drawn with jittered edges (with chance `care`),
 * or else a box of a made-up answer (the synthetic generator's, another seed) in its place.
 */
function answerOf(w: SimulatedWorker, careful: boolean, params: Json, truth: Json, key: string): Json {
  const rng = new SeededRandom(`answer:${key}`);
  const madeUp = (syntheticResponse('imageannotation', params, `made-up:${key}`).annotations as Json[]).slice();
  const care = careful ? Math.max(w.care, 0.97) : w.care;
  const annotations = (truth.annotations as Json[]).map((box) => {
    if (rng.next() < care) {
      const edge = (v: number, size: number) => Math.max(0, Math.round((v + bell(rng) * w.jitter * size) * 10) / 10);
      const left = edge(box.left, box.width);
      const top = edge(box.top, box.height);
      const right = edge(box.left + box.width, box.width);
      const bottom = edge(box.top + box.height, box.height);
      return {
        uuid: rng.uuid(),
        type: 'box',
        label: box.label,
        left,
        top,
        width: Math.max(1, Math.round((right - left) * 10) / 10),
        height: Math.max(1, Math.round((bottom - top) * 10) / 10),
      };
    }
    const other = madeUp.find((b) => b.label === box.label) ?? madeUp[0]!;
    madeUp.splice(madeUp.indexOf(other), 1, { ...other, label: '' });
    return { ...other, uuid: rng.uuid(), label: box.label };
  });
  return { annotations };
}

const score = (params: Json, a: Json, b: Json) => scoreAnswers('imageannotation', params, a, b).score;

/** The mean pairwise score of several answers (the consensus agreement), and each one's mean against the others. */
function agreementOf(params: Json, answers: Json[]): { mean: number; each: number[] } {
  const each = answers.map(() => [] as number[]);
  const pairs: number[] = [];
  for (let i = 0; i < answers.length; i++)
    for (let j = i + 1; j < answers.length; j++) {
      const s = score(params, answers[i]!, answers[j]!);
      pairs.push(s);
      each[i]!.push(s);
      each[j]!.push(s);
    }
  return { mean: mean(pairs), each: each.map(mean) };
}

/** A loopback receiver of the customer's callbacks: the latest body per task. */
async function startReceiver(): Promise<{ url: string; bodies: Map<string, Json>; count: () => number; close: () => Promise<void> }> {
  const bodies = new Map<string, Json>();
  let count = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count++;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as Json;
        const task = (body.task ?? body) as Json;
        if (typeof task.task_id === 'string') bodies.set(task.task_id, task);
      } catch {
        // Not JSON: counted, not kept.
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/callbacks`,
    bodies,
    count: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One HTTP call; the parsed body (null for 204), or an error naming the call and the answer. */
async function call(url: string, method: string, headers: Record<string, string>, json?: unknown): Promise<Json | null> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  if (res.status === 204) return null;
  if (res.status !== 200) throw new Error(`${method} ${url} answered ${res.status}: ${text}`);
  return JSON.parse(text) as Json;
}

/** Waits for the clock to pass `after` (ms), so the next creation's time sorts after the last one. */
async function nextMillisecond(after: number) {
  while (Date.now() <= after) await new Promise((r) => setTimeout(r, 1));
}

/**
 * Runs the simulation on a server started with delivery to loopback allowed (ALLOW_PRIVATE_NETWORKS
 * 127.0.0.0/8, DELIVERY_POLL_MS > 0) and, for a replayable run, simulationRandom(seed) as its
 * `random`. Makes its own account, project, tasks and workers.
 */
export async function simulateWorkforce(
  server: { url: string; uow: UnitOfWork },
  options: SimulationOptions = {},
): Promise<SimulationResult> {
  const seed = options.seed ?? 19;
  const taskCount = options.tasks ?? 200;
  const evaluationCount = options.evaluationTasks ?? 20;
  const specs = options.workers ?? defaultWorkforce;
  const account = await createAccount(server.uow, `simulation-${seed}-${Date.now()}`, new Date());
  const key = { authorization: basicAuth(account.live_key) };
  const customer = (method: string, path: string, json?: unknown) => call(server.url + path, method, key, json);
  const receiver = await startReceiver();
  const started = performance.now();
  let workerRequests = 0;
  try {
    await customer('POST', '/v1/projects', { type: 'imageannotation', name: PROJECT });
    await customer('PUT', `/v1/projects/${PROJECT}/quality_policy`, simulationPolicy);

    // Training and evaluation tasks (their expected answers are truths too), then the live tasks,
    // each created after the last one's millisecond: the queue's order (by creation) is fixed.
    const truthByAttachment = new Map<string, Json>();
    let last = 0;
    const make = async (path: string, name: string, body: (params: Json, truth: Json) => Json) => {
      const params = paramsOf(name);
      const truth = truthOf(params, `truth:${seed}:${name}`);
      truthByAttachment.set(params.attachment, truth);
      await nextMillisecond(last);
      const made = (await customer('POST', path, body(params, truth)))!;
      last = Date.now();
      return { made, params, truth };
    };
    for (let i = 0; i < simulationPolicy.training.required; i++)
      await make('/v1/training_tasks/imageannotation', `training-${i}`, (params, truth) => ({ ...params, expected_response: truth }));
    for (let i = 0; i < evaluationCount; i++)
      await make('/v1/evaluation_tasks/imageannotation', `evaluation-${i}`, (params, truth) => ({ ...params, expected_response: truth }));
    const live = new Map<string, { params: Json; truth: Json }>();
    for (let i = 0; i < taskCount; i++) {
      const { made, params, truth } = await make('/v1/task/imageannotation', `task-${i}`, (params) => ({
        ...params,
        project: PROJECT,
        callback_url: receiver.url,
      }));
      live.set(made.task_id as string, { params, truth });
    }

    const workers: {
      spec: SimulatedWorker;
      token: string;
      workerId: string;
      live: { taskId: string; response: Json }[];
      evaluation: number[];
      training: number[];
    }[] = [];
    for (const spec of specs) {
      const w = await createWorker(server, {
        accountId: account.account_id,
        email: `${spec.name}.${seed}@example.com`,
        displayName: spec.name,
      });
      workers.push({ spec, token: w.token, workerId: w.workerId, live: [], evaluation: [], training: [] });
    }
    const reviewer = await createWorker(server, {
      accountId: account.account_id,
      roles: ['reviewer'],
      email: `reviewer.${seed}@example.com`,
    });
    const worker = (token: string, method: string, path: string, json?: unknown) => {
      workerRequests++;
      return call(`${server.url}/worker/v1${path}`, method, bearer(token), json);
    };
    const created = performance.now();

    // Rounds: each worker in turn asks for `pace` assignments and answers each at once; then the
    // reviewer takes what waits for review (accepting what it is shown: every completed answer is
    // the workers'). Until a whole round hands out nothing. The turn order moves on by 7 workers
    // a round: the workers who follow one another share tasks, so each meets everyone over a run.
    let rounds = 0;
    let reviews = 0;
    for (let handedOut = 1; handedOut > 0; rounds++) {
      handedOut = 0;
      const turn = workers.map((_, i) => workers[(i + rounds * 7) % workers.length]!);
      for (const w of turn) {
        for (let k = 0; k < w.spec.pace; k++) {
          const a = await worker(w.token, 'POST', '/assignments/next', { role: 'attempt' });
          if (!a) break;
          handedOut++;
          const task = a.task as Json;
          const training = a.training !== undefined;
          const liveTask = live.get(task.task_id);
          const truth = liveTask?.truth ?? truthByAttachment.get(task.params.attachment);
          if (!truth) throw new Error(`assignment ${a.assignment_id} shows a task the simulation did not make`);
          const response = answerOf(
            w.spec,
            training && w.spec.slacker,
            task.params,
            truth,
            `${seed}:${w.spec.name}:${task.params.attachment}`,
          );
          await worker(w.token, 'POST', `/assignments/${a.assignment_id}/submit`, {
            lease_token: a.lease_token,
            response,
            active_ms: 20_000,
          });
          if (liveTask) w.live.push({ taskId: task.task_id, response });
          else (training ? w.training : w.evaluation).push(score(task.params, truth, response));
        }
      }
      for (;;) {
        const r = await worker(reviewer.token, 'POST', '/assignments/next', { role: 'review' });
        if (!r) break;
        handedOut++;
        reviews++;
        await worker(reviewer.token, 'POST', `/assignments/${r.assignment_id}/review`, {
          lease_token: r.lease_token,
          result: 'accepted',
          active_ms: 5_000,
        });
      }
      if (rounds > 1000) throw new Error('the simulation did not settle in 1000 rounds');
    }

    const worked = performance.now();
    // Every task's callback, with its completed response.
    for (const deadline = Date.now() + 60_000; [...live.keys()].some((id) => !receiver.bodies.has(id)); ) {
      if (Date.now() > deadline)
        throw new Error(`callbacks of ${[...live.keys()].filter((id) => !receiver.bodies.has(id)).length} tasks did not arrive in 60 s`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const called = performance.now();
    // The answers each task's last combination took: the submitted ones, not those the server
    // rejected (a paused worker's answer under review goes back to the queue).
    const rejected = new Set<string>();
    for (const w of workers) {
      let next: string | undefined;
      do {
        const page = (await worker(w.token, 'GET', `/assignments?status=reviewed&limit=100${next ? `&next_token=${next}` : ''}`))!;
        for (const a of page.docs as Json[]) if (a.review?.result === 'rejected') rejected.add(`${w.spec.name} ${a.task.task_id}`);
        next = page.next_token;
      } while (next);
    }
    const tasks: TaskOutcome[] = [...live].map(([taskId, { params, truth }]) => {
      const answers = workers.flatMap((w) =>
        w.live
          .filter((x) => x.taskId === taskId && !rejected.has(`${w.spec.name} ${taskId}`))
          .map((x) => ({ worker: w.spec.name, response: x.response })),
      );
      const completed = receiver.bodies.get(taskId)!.response as Json;
      return {
        taskId,
        params,
        truth,
        answers,
        completed,
        completedScore: score(params, truth, completed),
        agreement: agreementOf(
          params,
          answers.map((x) => x.response),
        ).mean,
      };
    });
    const agreements = new Map<string, number[]>();
    for (const t of tasks) {
      const { each } = agreementOf(
        t.params,
        t.answers.map((x) => x.response),
      );
      t.answers.forEach((x, i) => {
        agreements.set(x.worker, [...(agreements.get(x.worker) ?? []), each[i]!]);
      });
    }
    const figures = (await customer('GET', `/v1/projects/${PROJECT}/quality`))!;
    return {
      workers: workers.map((w) => ({
        ...w.spec,
        workerId: w.workerId,
        live: w.live,
        evaluationScores: w.evaluation,
        trainingScores: w.training,
        trueAccuracy: mean(w.live.map((x) => score(live.get(x.taskId)!.params, live.get(x.taskId)!.truth, x.response))),
        agreement: agreements.has(w.spec.name) ? mean(agreements.get(w.spec.name)!) : null,
      })),
      tasks,
      singleMean: mean(workers.flatMap((w) => w.live.map((x) => score(live.get(x.taskId)!.params, live.get(x.taskId)!.truth, x.response)))),
      completedMean: mean(tasks.map((t) => t.completedScore)),
      reviews,
      callbacks: receiver.count(),
      figures,
      rounds,
      workerRequests,
      ms: { create: Math.round(created - started), work: Math.round(worked - created), callbacks: Math.round(called - worked) },
    };
  } finally {
    await receiver.close();
  }
}
