// Progress of a run: a progress bar on a terminal (failures printed above it as they happen),
// plain lines otherwise (one per check, for CI logs).
import cliProgress from 'cli-progress';
import type { CheckResult, ProgressSink } from './types.ts';

const firstLine = (r: CheckResult) => (r.outcome === 'failed' ? `: ${r.message.split('\n')[0]}` : r.outcome === 'skipped' ? ` (${r.reason})` : '');

export function progressSink(stream: NodeJS.WriteStream = process.stderr): ProgressSink {
  if (!stream.isTTY) {
    return {
      log: (text) => void stream.write(`${text}\n`),
      result: (r, done, total) => void stream.write(`[${done}/${total}] ${r.outcome} ${r.generation} ${r.check.id}${firstLine(r)}\n`),
    };
  }
  const multi = new cliProgress.MultiBar(
    {
      stream,
      format: ' {bar} {value}/{total} | failed {failed} | {check}',
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
      bar = multi.create(total, 0, { failed: 0, check: '' });
    },
    result(r) {
      if (r.outcome === 'failed') {
        failed++;
        multi.log(`✗ ${r.generation} ${r.check.id}${firstLine(r)}\n`);
      }
      bar?.increment(1, { failed, check: `${r.generation} ${r.check.id}` });
    },
    stop() {
      multi.stop();
    },
  };
}
