// Progress of a run: a progress bar on a terminal (failures printed above it as they happen),
// plain lines otherwise (one per check, for CI logs). Both count the planned check runs (check ×
// generation) and show the time left, estimated from the mean time per check so far.
import cliProgress from 'cli-progress';
import type { CheckResult, ProgressSink } from './types.ts';

const firstLine = (r: CheckResult) =>
  r.outcome === 'failed' ? `: ${r.message.split('\n')[0]}` : r.outcome === 'skipped' ? ` (${r.reason})` : '';

/** `1h02m`, `3m05s`, `12s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Time left after `done` of `total` checks in `elapsedMs`: the mean so far times what remains. */
export function timeLeft(done: number, total: number, elapsedMs: number): string {
  if (done === 0) return '?';
  return duration((elapsedMs / done) * (total - done));
}

export function progressSink(stream: NodeJS.WriteStream = process.stderr, now: () => number = () => performance.now()): ProgressSink {
  let startedAt = now();
  if (!stream.isTTY) {
    return {
      log: (text) => void stream.write(`${text}\n`),
      start: () => {
        startedAt = now();
      },
      result: (r, done, total) =>
        void stream.write(
          `[${done}/${total}] ${r.outcome} ${r.generation} ${r.check.id}${firstLine(r)} (left ${timeLeft(done, total, now() - startedAt)})\n`,
        ),
    };
  }
  const multi = new cliProgress.MultiBar(
    {
      stream,
      format: ' {bar} {value}/{total} checks | left {left} | failed {failed} | {check}',
      hideCursor: true,
      clearOnComplete: false,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  let bar: cliProgress.SingleBar | undefined;
  let failed = 0;
  return {
    log: (text) => (bar ? multi.log(`${text}\n`) : void stream.write(`${text}\n`)),
    start(total) {
      startedAt = now();
      bar = multi.create(total, 0, { failed: 0, check: '', left: '?' });
    },
    result(r, done, total) {
      if (r.outcome === 'failed') {
        failed++;
        multi.log(`✗ ${r.generation} ${r.check.id}${firstLine(r)}\n`);
      }
      bar?.increment(1, { failed, check: `${r.generation} ${r.check.id}`, left: timeLeft(done, total, now() - startedAt) });
    },
    stop() {
      multi.stop();
    },
  };
}
