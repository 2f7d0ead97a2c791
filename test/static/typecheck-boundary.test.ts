// The contract reaches the handlers: the compiler fails when an operation of a contract has no
// handler, and when a handler or a view answers a shape the contract does not define. Each case
// plants one change in an in-memory copy of a source file and typechecks the server with it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { root } from '../support/spec.ts';

const file = (rel: string) => path.join(root, rel);
const config = ts.parseJsonConfigFileContent(ts.readConfigFile(file('tsconfig.json'), ts.sys.readFile).config, ts.sys, root);
let previous: ts.Program | undefined;

/** The errors tsc reports in `reportIn` when `plant` replaces `from` by `to` in `rel` (which must contain `from`). */
function errorsWith(plant: { rel: string; from: string; to: string } | null, reportIn: string): string[] {
  const host = ts.createCompilerHost(config.options);
  if (plant) {
    const original = readFileSync(file(plant.rel), 'utf8');
    expect(original, `the planted change must apply to ${plant.rel}`).toContain(plant.from);
    const planted = original.replace(plant.from, plant.to);
    const readFile = host.readFile.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    const target = path.normalize(file(plant.rel));
    host.readFile = (name) => (path.normalize(name) === target ? planted : readFile(name));
    host.getSourceFile = (name, language, onError, fresh) =>
      path.normalize(name) === target ? ts.createSourceFile(name, planted, language) : getSourceFile(name, language, onError, fresh);
  }
  const program = ts.createProgram([file('server/app.ts'), file(reportIn)], config.options, host, previous);
  previous = program;
  const source = program.getSourceFile(file(reportIn))!;
  return program.getSemanticDiagnostics(source).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the typed HTTP boundary', { timeout: 120_000 }, () => {
  it('compiles as it is (the cases below fail because of their planted change)', () => {
    expect(errorsWith(null, 'server/http/handlers.ts')).toEqual([]);
    expect(errorsWith(null, 'server/http/views/tasks.ts')).toEqual([]);
  });

  it('fails when an operation of a contract has no handler', () => {
    const errors = errorsWith(
      { rel: 'server/http/handlers.ts', from: '    createLidarSegmentationTask: create,\n', to: '' },
      'server/http/handlers.ts',
    );
    expect(errors.join('\n')).toMatch(/createLidarSegmentationTask/);
  });

  it('fails when a handler answers a domain object instead of the wire shape', () => {
    const errors = errorsWith(
      {
        rel: 'server/http/projects.ts',
        from: 'batchCountsView(await batchStatus(uow, caller, path.batchName))',
        to: 'await batchStatus(uow, caller, path.batchName)',
      },
      'server/http/handlers.ts',
    );
    expect(errors.join('\n')).toMatch(/getBatchStatus/);
  });

  it('fails when a view gives a field the wrong type', () => {
    const errors = errorsWith(
      { rel: 'server/http/views/tasks.ts', from: 'created_at: task.createdAt.toISOString()', to: 'created_at: task.createdAt' },
      'server/http/views/tasks.ts',
    );
    expect(errors.join('\n')).toMatch(/created_at|Date/);
  });

  it('fails when a view misspells an optional field', () => {
    const errors = errorsWith(
      {
        rel: 'server/http/views/tasks.ts',
        from: 'callback_succeeded: task.callbackCompleted ?? undefined',
        to: 'callback_succeded: task.callbackCompleted ?? undefined',
      },
      'server/http/views/tasks.ts',
    );
    expect(errors.join('\n')).toMatch(/callback_succeded/);
  });

  it("fails when a callback's body misspells a field of its webhook", () => {
    const errors = errorsWith(
      { rel: 'server/http/views/callbacks.ts', from: 'error: stored<', to: 'eror: stored<' },
      'server/http/views/callbacks.ts',
    );
    expect(errors.join('\n')).toMatch(/eror/);
  });

  it('fails when a view leaves out a required field', () => {
    const errors = errorsWith(
      { rel: 'server/http/views/projects.ts', from: '    self_label_batch: b.selfLabelBatch,\n', to: '' },
      'server/http/views/projects.ts',
    );
    expect(errors.join('\n')).toMatch(/self_label_batch/);
  });
});

/** The nodes of `source` that `match`, as `name:line: text` (the node's first line). */
function nodesWhere(name: string, source: string, match: (node: ts.Node) => boolean): string[] {
  const found: string[] = [];
  const sourceFile = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    if (match(node))
      found.push(`${name}:${sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().split('\n')[0]}`);
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** Every TypeScript file under `dir` (relative to the root), with its path relative to the root. */
function filesUnder(dir: string): string[] {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true }))
      if (entry.isDirectory()) walk(path.join(at, entry.name));
      else if (entry.name.endsWith('.ts')) files.push(path.relative(root, path.join(at, entry.name)));
  };
  walk(file(dir));
  return files;
}

/**
 * The spreads in `source` of a conditional whose branches are object literals
 * (`...(x ? { field: x } : {})`): their fields are not checked against the wire type, so a misspelt
 * one compiles. A view gives an optional field as its value or `undefined` (JSON leaves it out).
 */
const conditionalSpreads = (name: string, source: string) =>
  nodesWhere(name, source, (node) => {
    if (!ts.isSpreadAssignment(node)) return false;
    let e: ts.Expression = node.expression;
    while (ts.isParenthesizedExpression(e)) e = e.expression;
    return ts.isConditionalExpression(e) && [e.whenTrue, e.whenFalse].some((b) => ts.isObjectLiteralExpression(b));
  });

describe('the views', () => {
  it('give optional fields as values, never as conditional spreads the compiler does not check', () => {
    const files = filesUnder('server/http/views');
    expect(files.length).toBeGreaterThan(5);
    expect(files.flatMap((f) => conditionalSpreads(f, readFileSync(file(f), 'utf8')))).toEqual([]);
    // The check finds the form it refuses.
    const planted = 'const v = { a: 1, ...(x !== null ? { callback_succeded: x } : {}) };';
    expect(conditionalSpreads('planted.ts', planted)).toEqual(['planted.ts:1: ...(x !== null ? { callback_succeded: x } : {})']);
  });
});

/** The places in `source` that read the wall clock themselves: `new Date()` and `Date.now()`. */
const wallClockReads = (name: string, source: string) =>
  nodesWhere(
    name,
    source,
    (node) =>
      (ts.isNewExpression(node) && node.expression.getText() === 'Date' && (node.arguments?.length ?? 0) === 0) ||
      (ts.isCallExpression(node) && node.expression.getText() === 'Date.now'),
  );

/**
 * The type assertions in `source` (`x as T`, `<T>x`; `as const` is none): each is a place where the
 * compiler is told instead of asked. A double assertion (`x as unknown as T`) counts twice.
 */
const typeAssertions = (name: string, source: string) =>
  nodesWhere(
    name,
    source,
    (node) =>
      (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) &&
      !(ts.isTypeReferenceNode(node.type) && node.type.typeName.getText() === 'const'),
  );

describe('the HTTP layer', () => {
  const files = filesUnder('server/http');

  it("reads the server's one clock (domain/clock.ts, which a test moves), never the wall clock itself", () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap((f) => wallClockReads(f, readFileSync(file(f), 'utf8')))).toEqual([]);
    // The check finds the forms it refuses (a date parsed from a value is no clock reading).
    const planted = 'const a = new Date();\nconst b = Date.now();\nconst c = new Date(x);';
    expect(wallClockReads('planted.ts', planted)).toEqual(['planted.ts:1: new Date()', 'planted.ts:2: Date.now()']);
  });

  it('asserts a type in at most 10 places: the wire is typed by the contract, not told', () => {
    const found = files.flatMap((f) => typeAssertions(f, readFileSync(file(f), 'utf8')));
    expect(found.length, found.join('\n')).toBeLessThanOrEqual(10);
    // The count sees every form, and `as const` is no assertion.
    const planted = 'const a = x as T;\nconst b = <T>x;\nconst c = x as unknown as T;\nconst d = [1] as const;';
    expect(typeAssertions('planted.ts', planted)).toEqual([
      'planted.ts:1: x as T',
      'planted.ts:2: <T>x',
      'planted.ts:3: x as unknown as T',
      'planted.ts:3: x as unknown',
    ]);
  });
});
