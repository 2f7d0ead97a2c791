// A project's quality policy: how its live work is checked (training, hidden evaluation, overlap
// and consensus, plausible speed, the calibration gate). Versioned as project parameters are: 0,
// 1, 2, ... one more with every PUT, earlier versions kept. A PUT replaces the policy as a whole:
// what it leaves out takes its default. Review sampling is not here: it is part of the staffing
// (domain/workforce/staffing.ts), which can differ per batch.
//
// The policy is a JSON document whose keys are its names on the wire (snake_case), in the store
// and in error messages alike, so a message names the field as the client wrote it.
import { invalid, notFound } from '../errors.ts';
import type { Caller } from '../model.ts';
import type { Project, Repositories, UnitOfWork } from '../ports.ts';
import type { QualityPolicy } from './model.ts';
import { projectByName } from '../projects.ts';

/** What a PUT may send: every part and every field optional. */
export type QualityPolicyInput = {
  [Part in keyof QualityPolicy]?: QualityPolicy[Part] extends object ? Partial<QualityPolicy[Part]> : QualityPolicy[Part];
};

/** The defaults (WORKFORCE.md §6; the contract's QualityPolicy schemas say the same). */
export const defaultQualityPolicy: QualityPolicy = {
  overlap: 1,
  training: { required: 5, pass_score: 0.8, retry_after_s: 86_400, max_tries: 3, show_expected: true },
  evaluation: { rate_new: 0.1, rate_trusted: 0.03, trusted_after: 50, window: 20, min_scored: 5, pause_below: 0.7 },
  consensus: { threshold: 0.8, max_extra: 2 },
  speed: { min_seconds: 'auto', fast_count: 3, of_last: 10 },
  calibration: { gate_score: 0.8 },
};

interface Bound {
  min: number;
  max: number;
  integer: boolean;
}
const share: Bound = { min: 0, max: 1, integer: false };
const count = (min: number, max: number): Bound => ({ min, max, integer: true });

/** The bounds of every number of the policy, by its dotted name (the contract states the same; a test compares them). */
export const qualityPolicyBounds: Record<string, Bound> = {
  overlap: count(1, 10),
  'training.required': count(0, 100),
  'training.pass_score': share,
  'training.retry_after_s': count(0, 2_592_000),
  'training.max_tries': count(1, 10),
  'evaluation.rate_new': { min: 0, max: 0.5, integer: false },
  'evaluation.rate_trusted': { min: 0, max: 0.5, integer: false },
  'evaluation.trusted_after': count(0, 10_000),
  'evaluation.window': count(1, 1000),
  'evaluation.min_scored': count(1, 1000),
  'evaluation.pause_below': share,
  'consensus.threshold': share,
  'consensus.max_extra': count(0, 10),
  'speed.min_seconds': { min: 0, max: 3600, integer: false },
  'speed.fast_count': count(1, 100),
  'speed.of_last': count(1, 100),
  'calibration.gate_score': share,
};

function checkNumber(name: string, value: unknown): void {
  const bound = qualityPolicyBounds[name];
  if (!bound) throw invalid(`${name} is not a quality policy field.`);
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${name} must be a number.`);
  if (bound.integer && !Number.isInteger(value)) throw invalid(`${name} is ${value}: a whole number.`);
  if (value < bound.min || value > bound.max) throw invalid(`${name} is ${value}: from ${bound.min} to ${bound.max}.`);
}

const parts = ['training', 'evaluation', 'consensus', 'speed', 'calibration'] as const;

/**
 * The full policy a PUT sets: the given values over the defaults, every number within its bounds
 * and the rules that join two fields (400 naming the field otherwise).
 */
function completePolicy(input: QualityPolicyInput): QualityPolicy {
  for (const key of Object.keys(input)) {
    if (key !== 'overlap' && !(parts as readonly string[]).includes(key)) throw invalid(`${key} is not a quality policy field.`);
  }
  const policy = structuredClone(defaultQualityPolicy);
  if (input.overlap !== undefined) {
    checkNumber('overlap', input.overlap);
    policy.overlap = input.overlap;
  }
  for (const part of parts) {
    const given = (input[part] ?? {}) as Record<string, unknown>;
    const target = policy[part] as unknown as Record<string, unknown>;
    for (const [field, value] of Object.entries(given)) {
      const name = `${part}.${field}`;
      if (value === undefined) continue;
      if (!(field in target)) throw invalid(`${name} is not a quality policy field.`);
      if (typeof target[field] === 'boolean') {
        if (typeof value !== 'boolean') throw invalid(`${name} must be true or false.`);
      } else if (!(name === 'speed.min_seconds' && value === 'auto')) checkNumber(name, value);
      target[field] = value;
    }
  }
  const { evaluation, speed } = policy;
  if (evaluation.min_scored > evaluation.window)
    throw invalid(`evaluation.min_scored is ${evaluation.min_scored}: at most evaluation.window (${evaluation.window}).`);
  if (speed.fast_count > speed.of_last) throw invalid(`speed.fast_count is ${speed.fast_count}: at most speed.of_last (${speed.of_last}).`);
  return policy;
}

/** A policy in force: a stored version, or the defaults (`version` null) when none was set. */
export interface PolicyInForce {
  project: Project;
  version: number | null;
  policy: QualityPolicy;
  createdAt: Date | null;
}

/**
 * Stored versions are read over the current defaults, so that a field added to the policy in a
 * later release has its default in versions stored before it.
 */
function withDefaults(stored: QualityPolicy): QualityPolicy {
  const policy = structuredClone(defaultQualityPolicy);
  if (typeof stored.overlap === 'number') policy.overlap = stored.overlap;
  for (const part of parts) Object.assign(policy[part], stored[part] ?? {});
  return policy;
}

/** The project's policy: its latest version, or `version` (404 naming it when the project has no such version). */
export async function getQualityPolicy(uow: UnitOfWork, caller: Caller, projectName: string, version?: number): Promise<PolicyInForce> {
  const project = await projectByName(uow, caller, projectName);
  const stored = await uow.quality.policyVersion(project.projectId, version);
  if (stored) return { project, version: stored.version, policy: withDefaults(stored.policy), createdAt: stored.createdAt };
  if (version !== undefined) throw notFound(`Project "${projectName}" has no quality policy version ${version}.`);
  return { project, version: null, policy: structuredClone(defaultQualityPolicy), createdAt: null };
}

/** Adds the next version of the project's policy (0 when it has none); the project row is locked so two PUTs number in turn. */
export async function setQualityPolicy(
  uow: UnitOfWork,
  caller: Caller,
  projectName: string,
  input: QualityPolicyInput,
  now: Date,
): Promise<PolicyInForce> {
  const policy = completePolicy(input);
  return uow.transaction(async (repos) => {
    const project = await projectByName(repos, caller, projectName, true);
    const latest = await repos.quality.policyVersion(project.projectId);
    const version = latest ? latest.version + 1 : 0;
    await repos.quality.addPolicyVersion({ projectId: project.projectId, version, policy, createdAt: now });
    return { project, version, policy, createdAt: now };
  });
}

/** The latest policy of a project the caller already holds (the work loop's training and evaluation steps). */
export async function projectPolicy(repos: Repositories, project: Project): Promise<QualityPolicy> {
  const stored = await repos.quality.policyVersion(project.projectId);
  return stored ? withDefaults(stored.policy) : structuredClone(defaultQualityPolicy);
}
