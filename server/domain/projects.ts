// Projects: versioned default parameters and versioned ontologies, per account and mode.
import { assertTypeEnabled } from './accounts.ts';
import { conflict, invalid, notFound } from './errors.ts';
import { newTaskId } from './ids.ts';
import type { Caller, Json } from './model.ts';
import type { OntologyVersion, ParamVersion, Project, Repositories, UnitOfWork } from './ports.ts';

export interface ProjectDetails {
  project: Project;
  params: ParamVersion[];
  ontologies: OntologyVersion[];
}

/** The contract's rules for a task type's parameters (http/contract.ts). */
export interface ParamRules {
  /** The parameter names of a task type (those a version keeps). */
  namesOf(type: string): ReadonlySet<string>;
  /** Checks each given parameter against its schema for the type (none is required): a message naming the first bad one, or null. */
  check(type: string, params: Json): string | null;
}

/**
 * The parameters a version keeps: only the type's own and `instruction` (other keys are ignored),
 * each a valid value for the type; a bad one → 400 naming it (`where`: the body's key that holds them).
 */
function versionParams(params: Json, type: string, rules: ParamRules, where: string): Json {
  const names = rules.namesOf(type);
  const kept = Object.fromEntries(Object.entries(params).filter(([k]) => names.has(k) || k === 'instruction'));
  const problem = rules.check(type, kept);
  if (problem) throw invalid(`${where}${problem}`);
  return kept;
}

async function details(repos: Repositories, project: Project): Promise<ProjectDetails> {
  const [params, ontologies] = await Promise.all([
    repos.projects.paramVersions([project.projectId]),
    repos.projects.ontologyVersions([project.projectId]),
  ]);
  return { project, params, ontologies };
}

/** A project of the caller's account and mode by its name; not_found when there is none. */
export async function projectByName(repos: Repositories, caller: Caller, name: string, forUpdate = false): Promise<Project> {
  const project = await repos.projects.get(caller.account.accountId, caller.mode, name, { forUpdate });
  if (!project) throw notFound(`Project "${name}" not found.`);
  return project;
}

export interface CreateProjectInput {
  type: string;
  name: string;
  params?: Json;
  rapid?: boolean;
  studio?: boolean;
}

export async function createProject(
  uow: UnitOfWork,
  caller: Caller,
  input: CreateProjectInput,
  rules: ParamRules,
  now: Date,
): Promise<ProjectDetails> {
  assertTypeEnabled(caller, input.type);
  if (input.rapid && input.studio) throw invalid('A project is rapid or studio, not both.');
  const params = input.params ? versionParams(input.params, input.type, rules, 'params.') : null;
  return uow.transaction(async (repos) => {
    const project: Project = {
      projectId: newTaskId(now),
      accountId: caller.account.accountId,
      mode: caller.mode,
      name: input.name,
      type: input.type,
      rapid: input.rapid ?? false,
      studio: input.studio ?? false,
      archived: false,
      createdAt: now,
    };
    if (!(await repos.projects.insert(project))) throw conflict(`A project named "${input.name}" exists already.`);
    if (params) await repos.projects.addParamVersion({ projectId: project.projectId, version: 0, params, createdAt: now });
    return details(repos, project);
  });
}

export async function getProject(uow: UnitOfWork, caller: Caller, name: string): Promise<ProjectDetails> {
  return details(uow, await projectByName(uow, caller, name));
}

export async function listProjects(uow: UnitOfWork, caller: Caller, filters: { archived?: boolean } = {}): Promise<ProjectDetails[]> {
  const list = await uow.projects.list(caller.account.accountId, caller.mode, filters);
  const ids = list.map((p) => p.projectId);
  const [params, ontologies] = await Promise.all([uow.projects.paramVersions(ids), uow.projects.ontologyVersions(ids)]);
  return list.map((project) => ({
    project,
    params: params.filter((v) => v.projectId === project.projectId),
    ontologies: ontologies.filter((v) => v.projectId === project.projectId),
  }));
}

/** A new parameter version: `patch` merges into the latest one, otherwise it replaces it. */
export async function setProjectParams(
  uow: UnitOfWork,
  caller: Caller,
  name: string,
  body: Json,
  rules: ParamRules,
  now: Date,
): Promise<ProjectDetails> {
  return uow.transaction(async (repos) => {
    const project = await projectByName(repos, caller, name, true);
    const versions = await repos.projects.paramVersions([project.projectId]);
    const latest = versions.at(-1);
    const { patch, ...given } = body;
    const params = versionParams(given, project.type, rules, '');
    await repos.projects.addParamVersion({
      projectId: project.projectId,
      version: latest ? latest.version + 1 : 0,
      params: patch === true && latest ? { ...latest.params, ...params } : params,
      createdAt: now,
    });
    return details(repos, project);
  });
}

/** Archives a project or undoes it; a project already so is returned unchanged. */
export async function setProjectArchived(uow: UnitOfWork, caller: Caller, name: string, archived: boolean): Promise<ProjectDetails> {
  return uow.transaction(async (repos) => {
    const project = await projectByName(repos, caller, name, true);
    if (project.archived !== archived) {
      project.archived = archived;
      await repos.projects.update(project);
    }
    return details(repos, project);
  });
}

/** A project that takes new work: not archived (a task or a batch naming it, directly or through a batch → 400). */
export function assertTakesWork(project: Project, what: 'task' | 'batch'): void {
  if (project.archived) throw invalid(`project: "${project.name}" is archived and takes no new ${what} (unarchive it first).`);
}

/** Choice names are unique across the whole tree (a label must name one choice). */
function assertUniqueChoices(ontology: unknown[]): void {
  const seen = new Set<string>();
  const visit = (items: unknown[], depth: number) => {
    for (const item of items) {
      const choice = typeof item === 'string' ? item : (item as { choice: string }).choice;
      if (seen.has(choice)) throw invalid(`ontology: the choice "${choice}" appears more than once (depth ${depth}).`);
      seen.add(choice);
      const sub = (item as { subchoices?: unknown[] }).subchoices; // a string choice has none
      if (sub) visit(sub, depth + 1);
    }
  };
  visit(ontology, 1);
}

export async function setProjectOntology(
  uow: UnitOfWork,
  caller: Caller,
  name: string,
  body: { ontology: unknown[]; name?: string },
  now: Date,
): Promise<ProjectDetails> {
  if (body.ontology.length === 0) throw invalid('ontology must have at least one choice.');
  assertUniqueChoices(body.ontology);
  return uow.transaction(async (repos) => {
    const project = await projectByName(repos, caller, name, true);
    const versions = await repos.projects.ontologyVersions([project.projectId]);
    await repos.projects.addOntologyVersion({
      projectId: project.projectId,
      version: (versions.at(-1)?.version ?? -1) + 1,
      name: body.name ?? null,
      ontology: body.ontology,
      createdAt: now,
    });
    return details(repos, project);
  });
}

export interface MergedParams {
  project: Project;
  version: number | null;
  /** The version's parameters under the task's own; instruction concatenated. */
  body: Json;
}

/**
 * The merge rule: the task uses the latest parameter version of its project (or the one it
 * names); its own parameters override the version's, except `instruction`, which is the project
 * text, a blank line, then the task text.
 */
export async function mergeProjectParams(
  repos: Repositories,
  caller: Caller,
  projectName: string,
  type: string,
  body: Json,
): Promise<MergedParams> {
  const project = await projectByName(repos, caller, projectName);
  assertTakesWork(project, 'task');
  if (project.type !== type) {
    throw invalid(`project: "${projectName}" is a ${project.type} project; a ${type} task cannot join it.`);
  }
  const versions = await repos.projects.paramVersions([project.projectId]);
  const wanted = body.project_param_version as number | undefined;
  const version = wanted === undefined ? versions.at(-1) : versions.find((v) => v.version === wanted);
  if (wanted !== undefined && !version) {
    throw invalid(`project_param_version: project "${projectName}" has no parameter version ${wanted}.`);
  }
  if (!version) return { project, version: null, body };
  const { instruction: projectInstruction, ...projectParams } = version.params;
  const merged: Json = { ...projectParams, ...body };
  const parts = [projectInstruction, body.instruction].filter((t): t is string => typeof t === 'string' && t !== '');
  if (parts.length > 0) merged.instruction = parts.join('\n\n');
  return { project, version: version.version, body: merged };
}
