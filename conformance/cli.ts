// `humantask conformance`: runs the conformance suite against any server of this API and reports.
import { parseArgs } from 'node:util';
import { progressSink } from './progress.ts';
import { summaryText, writeReports } from './report.ts';
import { defaultRuns, runConformance } from './runner.ts';
import type { BucketOption, Generation, Options } from './types.ts';

const conformanceUsage = `usage: humantask conformance --base-url URL --key KEY [options]

Tests a server of this API against the contract and the API description's rules.

  --base-url URL          origin of the server (current generation at URL, older at URL/legacy)
  --key KEY               a test-mode API key of an account
  --generation G          current | legacy | both (default both)
  --other-key KEY2        a key of a second account (isolation checks; skipped without it)
  --live-key KEY3         the live key of the account of --key (live-mode checks; skipped without it).
                          The workforce checks of review, redo, leases, workers and staffing make
                          the account's own workers with it and log them in (no worker token needed)
  --settings-key KEY4     the test key of an account set up to try the account settings: a test
                          completion delay of at least 1 s, audiotranscription and segmentannotation
                          disabled, a default callback URL (account-settings checks; skipped without it)
  --worker-token TOKEN    a token of a worker (of the server's operator workforce or of the account's
                          own) who may take the account's live tasks: the workforce checks of the
                          worker API at URL/worker/v1 (skipped without it; they need --live-key too)
  --callback-auth-key K   the account's callback auth key and signing secret (whsec_...): callbacks
  --signing-secret S      are then verified (service-callback-auth, webhook-signature); else inspected
  --callback-host HOST    address of this machine that the server can reach; the suite receives
                          callbacks there (callback checks are skipped without it), e.g. 127.0.0.1
  --bucket URL            a bucket of an S3-protocol service that this machine and the server can
                          reach, as the service's origin and the bucket's name, path style:
                          https://minio.example.com:9000/conformance (storage checks skipped without it)
  --bucket-key ID:SECRET  keys of that bucket that may list, read and write it (the storage checks
                          connect it to the account, put objects under conformance/ and read exports)
  --bucket-region R       the bucket's region (default us-east-1)
  --only PATTERN          only checks whose id or area contains PATTERN (case-insensitive)
  --report DIR            write report.xml (JUnit), report.html and report.json into DIR
  --seed N                seed of the generated input (default 1; printed, so any run can be repeated)
  --runs N                generated requests per operation, valid and invalid each (default ${defaultRuns})
  --profile P             full | mock (default full); mock runs the shape checks and generated valid
                          requests only, for a mock such as Prism, and lists the checks it skipped
  --legacy-prefix PATH    base path of the older generation (default /legacy; '' when it has its own origin)
  --cleanup               cancel the tasks the run created when it ends (without it they stay in the
                          accounts, with the projects and batches the run created, which no API deletes)
  -h, --help              this text

The run creates tasks, projects, batches, training and evaluation tasks in the accounts of the keys,
and workers of the account's own workforce (the workforce checks remove theirs when they end; the
few that the examples of tag Workforce make stay, as projects do):
use test accounts, not production ones.

Exit status: 0 when every check passed, 1 when one failed, 2 for a usage error.
`;

class UsageError extends Error {}

function parseConformanceArgs(args: string[]): Options & { reportDir?: string } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      key: { type: 'string' },
      generation: { type: 'string', default: 'both' },
      'other-key': { type: 'string' },
      'callback-auth-key': { type: 'string' },
      'signing-secret': { type: 'string' },
      'live-key': { type: 'string' },
      'settings-key': { type: 'string' },
      'worker-token': { type: 'string' },
      'callback-host': { type: 'string' },
      bucket: { type: 'string' },
      'bucket-key': { type: 'string' },
      'bucket-region': { type: 'string', default: 'us-east-1' },
      only: { type: 'string' },
      report: { type: 'string' },
      seed: { type: 'string', default: '1' },
      runs: { type: 'string', default: String(defaultRuns) },
      profile: { type: 'string', default: 'full' },
      'legacy-prefix': { type: 'string' },
      cleanup: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const baseUrl = values['base-url'];
  if (!baseUrl || !/^https?:\/\//.test(baseUrl)) throw new UsageError('--base-url URL is required (http:// or https://)');
  if (!values.key) throw new UsageError('--key KEY is required');
  const generationsOf: Record<string, Generation[]> = { current: ['current'], legacy: ['legacy'], both: ['current', 'legacy'] };
  const generations = generationsOf[values.generation];
  if (!generations) throw new UsageError('--generation is current, legacy or both');
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError('--seed is an integer');
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new UsageError('--runs is a positive integer');
  if (values.profile !== 'full' && values.profile !== 'mock') throw new UsageError('--profile is full or mock');
  const bucket = bucketOption(values.bucket, values['bucket-key'], values['bucket-region']);
  return {
    baseUrl,
    key: values.key,
    ...(values['other-key'] ? { otherKey: values['other-key'] } : {}),
    ...(values['callback-auth-key'] ? { callbackAuthKey: values['callback-auth-key'] } : {}),
    ...(values['signing-secret'] ? { signingSecret: values['signing-secret'] } : {}),
    ...(values['live-key'] ? { liveKey: values['live-key'] } : {}),
    ...(values['settings-key'] ? { settingsKey: values['settings-key'] } : {}),
    ...(values['worker-token'] ? { workerToken: values['worker-token'] } : {}),
    generations,
    callbackHost: values['callback-host'] ?? '',
    ...(values.only ? { only: values.only } : {}),
    ...(values.report ? { reportDir: values.report } : {}),
    seed,
    runs,
    profile: values.profile,
    ...(values['legacy-prefix'] !== undefined ? { legacyPrefix: values['legacy-prefix'] } : {}),
    ...(values.cleanup ? { cleanup: true } : {}),
    ...(bucket ? { bucket } : {}),
  };
}

/** --bucket, --bucket-key and --bucket-region read; undefined without --bucket. */
function bucketOption(url: string | undefined, key: string | undefined, region = 'us-east-1'): BucketOption | undefined {
  if (url === undefined && key === undefined) return undefined;
  const m = url === undefined ? null : /^(https?:\/\/[^/]+)\/([^/?#]+)\/?$/.exec(url);
  if (!m) throw new UsageError("--bucket is the service's origin and the bucket, e.g. https://minio.example.com:9000/conformance");
  const colon = key?.indexOf(':') ?? -1;
  if (!key || colon < 1 || colon === key.length - 1) throw new UsageError('--bucket-key ID:SECRET is required with --bucket');
  return { endpoint: m[1]!, name: m[2]!, region, accessKeyId: key.slice(0, colon), secretAccessKey: key.slice(colon + 1) };
}

/** Runs the suite as the command line says; resolves to the exit status. */
export async function main(args: string[], io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream } = process): Promise<number> {
  let options: ReturnType<typeof parseConformanceArgs>;
  try {
    options = parseConformanceArgs(args);
  } catch (err) {
    const message =
      err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? (err as Error).message : String(err);
    if (message) io.stderr.write(`humantask conformance: ${message}\n\n`);
    io.stdout.write(conformanceUsage);
    return message ? 2 : 0;
  }
  const run = await runConformance(options, { out: progressSink(io.stderr) });
  io.stdout.write(`\n${summaryText(run)}\n`);
  if (options.reportDir) {
    const files = writeReports(run, options.reportDir);
    io.stdout.write(`reports: ${files.xml}, ${files.html}, ${files.json}\n`);
  }
  return run.passed ? 0 : 1;
}
