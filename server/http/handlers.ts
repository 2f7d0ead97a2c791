// The handler tables of the two generations: one handler for every operation of each contract, by
// operationId. A contract operation without a handler here fails the compile (HandlerTable is
// exhaustive); test/static/typecheck-boundary.test.ts proves it.
import { identityHandlers } from './identity.ts';
import { overviewHandlers } from './overview.ts';
import { projectHandlers } from './projects.ts';
import { qualityHandlers } from './quality.ts';
import { taskHandlers, type HandlerDeps } from './tasks.ts';
import { trainingHandlers } from './training.ts';
import { storageHandlers } from './storage.ts';
import { defaultResultLinks, resultHandlers } from './results.ts';
import type { ResultLinks } from '../results/files.ts';
import type { TaskPage } from '../domain/task-reads.ts';
import { transferHandlers } from './transfer.ts';
import type { HandlerTable, Operations } from './typed.ts';
import { workforceManagementHandlers } from './workforce/handlers.ts';
import { currentTaskListView, currentTaskView, legacyTaskListView, legacyTaskView } from './views/tasks.ts';

/** A page whose tasks show their response files as links (decision record 24). */
const shownPage = (page: TaskPage, show: ResultLinks['show']): TaskPage => ({ ...page, tasks: page.tasks.map(show) });

export function currentHandlers(deps: HandlerDeps): HandlerTable<Operations['current']> {
  const results = deps.results ?? defaultResultLinks();
  const { create, ...tasks } = taskHandlers(deps, {
    task: (t) => currentTaskView(results.show(t)),
    list: (page, limit, _offset, shape) => currentTaskListView(shownPage(page, results.show), limit, shape),
    pagesByOffset: false,
  });
  const { create: createTraining, ...training } = trainingHandlers(deps);
  return {
    ...tasks,
    ...projectHandlers(deps),
    ...training,
    ...taskCreations(create),
    createImageAnnotationTask: create,
    createTextCollectionTask: create,
    createNamedEntityRecognitionTask: create,
    createDocumentTranscriptionTask: create,
    createDocumentTranscriptionTaskAlias: create,
    createVideoPlaybackAnnotationTask: create,
    createLidarSegmentationTask: create,
    ...trainingCreations(createTraining),
    ...workforceManagementHandlers(deps),
    ...qualityHandlers(deps),
    ...overviewHandlers(deps),
    ...identityHandlers(deps.uow, deps.identityDeps),
    ...transferHandlers(deps),
    ...storageHandlers(deps),
    ...resultHandlers({ ...deps, results }),
  };
}

export function legacyHandlers(deps: HandlerDeps): HandlerTable<Operations['legacy']> {
  const results = deps.results ?? defaultResultLinks();
  // The bulk cancel is the current generation's only (issue 35).
  const {
    create,
    cancelTasks: _currentOnly,
    ...tasks
  } = taskHandlers(deps, {
    task: (t) => legacyTaskView(results.show(t)),
    list: (page, limit, offset, shape) => legacyTaskListView(shownPage(page, results.show), limit, offset, shape),
    pagesByOffset: true,
  });
  const { create: createTraining, ...training } = trainingHandlers(deps);
  return {
    ...tasks,
    ...projectHandlers(deps),
    ...training,
    ...taskCreations(create),
    ...trainingCreations(createTraining),
  };
}

/** The task creations both generations serve (the path names the type). */
function taskCreations<H>(create: H) {
  return {
    createAnnotationTask: create,
    createPointAnnotationTask: create,
    createLineAnnotationTask: create,
    createPolygonAnnotationTask: create,
    createSegmentAnnotationTask: create,
    createSegmentAnnotationTaskAlias: create,
    createCategorizationTask: create,
    createComparisonTask: create,
    createDataCollectionTask: create,
    createTranscriptionTask: create,
    createAudioTranscriptionTask: create,
  };
}

/** The training and evaluation creations, the same in both generations (the path names kind and type). */
function trainingCreations<H>(create: H) {
  return {
    createTextCollectionTrainingTask: create,
    createImageAnnotationTrainingTask: create,
    createNamedEntityRecognitionTrainingTask: create,
    createDocumentTranscriptionTrainingTask: create,
    createDocumentTranscriptionTrainingTaskAlias: create,
    createSegmentAnnotationTrainingTask: create,
    createSegmentAnnotationTrainingTaskAlias: create,
    createVideoPlaybackAnnotationTrainingTask: create,
    createTextCollectionEvaluationTask: create,
    createImageAnnotationEvaluationTask: create,
    createNamedEntityRecognitionEvaluationTask: create,
    createDocumentTranscriptionEvaluationTask: create,
    createDocumentTranscriptionEvaluationTaskAlias: create,
    createSegmentAnnotationEvaluationTask: create,
    createSegmentAnnotationEvaluationTaskAlias: create,
    createVideoPlaybackAnnotationEvaluationTask: create,
  };
}
