// The domain model: one task, whatever generation shows it.
import type { Json } from '../../shared/json.ts';

/** A JSON object (the rules shared with the labeling app define it: shared/json.ts). */
export type { Json };
export type Mode = 'test' | 'live';
export type Generation = 'current' | 'legacy';
export type TaskStatus = 'pending' | 'completed' | 'canceled' | 'error';
export type Urgency = 'immediate' | 'day' | 'week';
export type CustomerReviewStatus = 'pending' | 'accepted' | 'rejected' | 'fixed';

/** One review of a completed task. */
export interface TaskAudit {
  auditedBy: string;
  auditedAt: Date;
  auditTimeSecs: number;
  result: 'accepted' | 'rejected' | 'fixed';
  source: 'customer' | 'humantask';
  comments?: string;
}

export interface Account {
  accountId: string;
  name: string;
  /** As stored: sealed once written (store/secrets.ts); a ClaimedMessage carries them open. */
  callbackAuthKey: string;
  signingSecret: string;
  defaultCallbackUrl: string | null;
  disabledTypes: string[];
  testCompletionDelayMs: number;
  createdAt: Date;
}

export interface Task {
  taskId: string;
  accountId: string;
  mode: Mode;
  generation: Generation;
  type: string;
  status: TaskStatus;
  instruction: string | null;
  params: Json;
  response: Json | null;
  callbackUrl: string | null;
  callbackCompleted: boolean | null;
  urgency: Urgency;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  customerReviewStatus: CustomerReviewStatus | null;
  timesRedone: number;
  metadata: Json;
  project: string | null;
  batch: string | null;
  projectParamVersion: number | null;
  audits: TaskAudit[];
  uniqueId: string | null;
  tags: string[] | null;
  clearUniqueIdOnError: boolean;
  testCompleteAt: Date | null;
  attachmentCheckAt: Date | null;
  /** Where the response's files are once written (decision record 24); absent or null: none. */
  resultFiles?: ResultFilesRecord | null;
}

/** A part of a response kept as a file (decision record 24). */
export type ResultFileName = 'annotations' | 'events';

/** Where a task's response files are: which response (its hash), where, and each file's name there. */
export interface ResultFilesRecord {
  /** SHA-256 (hex) of the response the files were made from: another response (a redo) needs new files. */
  sha256: string;
  where: { kind: 'local' } | { kind: 'bucket'; connectionId: string; provider: 's3' | 'gcs'; bucket: string };
  files: Partial<Record<ResultFileName, { key: string; bytes: number }>>;
}

/** Who is asking: the account and the mode its key selects. */
export interface Caller {
  account: Account;
  mode: Mode;
}
