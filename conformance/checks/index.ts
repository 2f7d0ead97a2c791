// Behaviour checks, each named after the section of the API description its rule comes from.
// One file per area; every check uses fresh names (ctx.unique) and deletes nothing, so that a run
// can be repeated on the same server.
import type { Check } from '../types.ts';
import { accountSettingChecks } from './account-settings.ts';
import { authChecks } from './auth.ts';
import { batchChecks } from './batches.ts';
import { callbackChecks } from './callbacks.ts';
import { clientEdgeChecks } from './client-edges.ts';
import { errorChecks } from './errors.ts';
import { idempotencyChecks } from './idempotency.ts';
import { identityChecks } from './identity.ts';
import { isolationChecks } from './isolation.ts';
import { listChecks } from './lists.ts';
import { markdownChecks } from './markdown.ts';
import { paramRuleChecks } from './param-rules.ts';
import { overviewChecks } from './overview.ts';
import { projectChecks } from './projects.ts';
import { resultFileChecks } from './result-files.ts';
import { qualityChecks } from './quality.ts';
import { taskChangeChecks } from './task-changes.ts';
import { storageChecks } from './storage.ts';
import { taskStateChecks } from './task-states.ts';
import { testModeChecks } from './test-mode.ts';
import { testModeRuleChecks } from './test-mode-rules.ts';
import { transferChecks } from './transfer.ts';
import { uniqueIdChecks } from './unique-id.ts';
import { wildChecks } from './wild.ts';
import { workforceChecks } from './workforce.ts';
import { workforceManageChecks } from './workforce-manage.ts';
import { workforceQualityChecks } from './workforce-quality.ts';
import { workforceReviewChecks } from './workforce-review.ts';

export const behaviourChecks: Check[] = [
  ...taskStateChecks,
  ...testModeChecks,
  ...testModeRuleChecks,
  ...uniqueIdChecks,
  ...transferChecks,
  ...storageChecks,
  ...resultFileChecks,
  ...idempotencyChecks,
  ...taskChangeChecks,
  ...paramRuleChecks,
  ...markdownChecks,
  ...errorChecks,
  ...listChecks,
  ...projectChecks,
  ...overviewChecks,
  ...batchChecks,
  ...wildChecks,
  ...clientEdgeChecks,
  ...callbackChecks,
  ...isolationChecks,
  ...accountSettingChecks,
  ...authChecks,
  ...workforceChecks,
  ...workforceReviewChecks,
  ...workforceQualityChecks,
  ...workforceManageChecks,
  ...qualityChecks,
  ...identityChecks,
];
