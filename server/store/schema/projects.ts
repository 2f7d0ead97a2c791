// Projects with their parameter and ontology versions, batches, quality policies, and training
// and evaluation tasks.
import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { customerJson, ts } from './columns.ts';
import { accounts } from './tasks.ts';

export const projects = pgTable(
  'projects',
  {
    projectId: text('project_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    rapid: boolean('rapid').notNull().default(false),
    studio: boolean('studio').notNull().default(false),
    /** Archived: takes no new task or batch; left out of `GET /v1/projects?archived=false`. */
    archived: boolean('archived').notNull().default(false),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('projects_name').on(t.accountId, t.mode, t.name)],
);

export const projectParamVersions = pgTable(
  'project_param_versions',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.projectId),
    version: integer('version').notNull(),
    params: customerJson<Record<string, unknown>>('params').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.version] })],
);

export const projectOntologyVersions = pgTable(
  'project_ontology_versions',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.projectId),
    version: integer('version').notNull(),
    name: text('name'),
    ontology: jsonb('ontology').$type<unknown[]>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.version] })],
);

export const batches = pgTable(
  'batches',
  {
    batchId: text('batch_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    name: text('name').notNull(),
    project: text('project').notNull(),
    status: text('status').$type<'staging' | 'in_progress' | 'completed'>().notNull(),
    callback: text('callback'),
    metadata: customerJson<Record<string, unknown>>('metadata').notNull(),
    calibrationBatch: boolean('calibration_batch').notNull().default(false),
    selfLabelBatch: boolean('self_label_batch').notNull().default(false),
    archived: boolean('archived').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    completedAt: ts('completed_at'),
    /**
     * When one of its tasks was last audited: the latest `audited_at` of their audit records, kept
     * by a row trigger on `tasks` (the hand-written block of migration 0024), so every audit,
     * whoever adds it (the customer's, a review's), moves it in its own transaction.
     */
    auditedAt: ts('audited_at'),
    /**
     * A calibration batch's calibration score so far (domain/quality/calibration.ts): the mean over
     * its decided attempts, recounted from work_events after each review or audit of its tasks;
     * null before the first. The claim reads it to open the project's production batches.
     */
    calibrationScore: doublePrecision('calibration_score'),
    calibrationReviewed: integer('calibration_reviewed').notNull().default(0),
  },
  (t) => [uniqueIndex('batches_name').on(t.accountId, t.mode, t.name), index('batches_list').on(t.accountId, t.mode, t.createdAt.desc())],
);

/**
 * A project's quality policy versions (domain/quality/policy.ts), versioned as its parameters are:
 * 0, 1, 2, ... one more with every PUT. The policy is stored whole, every default filled in, so a
 * version reads the same whatever later releases change the defaults to.
 */
export const qualityPolicies = pgTable(
  'quality_policies',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.projectId),
    version: integer('version').notNull(),
    policy: jsonb('policy').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.version] })],
);

/** Training and evaluation tasks: their own id space, never in the task list, no callbacks. */
export const trainingTasks = pgTable(
  'training_tasks',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    kind: text('kind').$type<'training' | 'evaluation'>().notNull(),
    type: text('type').notNull(),
    params: customerJson<Record<string, unknown>>('params').notNull(),
    expectedResponse: jsonb('expected_response').$type<Record<string, unknown>>().notNull(),
    initialResponse: jsonb('initial_response').$type<Record<string, unknown>>(),
    createdAt: ts('created_at').notNull(),
    /** The audited task it was promoted from (POST /v1/task/{taskId}/promote); null when created directly. */
    sourceTaskId: text('source_task_id'),
  },
  (t) => [
    index('training_tasks_list').on(t.accountId, t.mode, t.kind, t.createdAt.desc(), t.id.desc()),
    // Promotion is idempotent: one training and one evaluation task per source task.
    uniqueIndex('training_tasks_source').on(t.sourceTaskId, t.kind).where(sql`${t.sourceTaskId} is not null`),
  ],
);
