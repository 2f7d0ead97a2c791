// Idempotency-Key is done one way (issue 33): the saved answers are read and written by the one
// module of the HTTP layer (server/http/idempotency.ts) and by the creating statement's claim
// (server/domain/idempotency.ts, the store); no code replaces an answer's `send` to keep it; and
// which operations take a key is the contract's `x-retry`, read by the server and the client alike.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { root } from '../support/spec.ts';

const allowed = new Set(['server/http/idempotency.ts', 'server/domain/idempotency.ts']);

/** The places in `source` that use the saved answers (`….idempotency.claim(…)` and the like), or replace a `send`. */
function keyHandling(name: string, source: string): string[] {
  const found: string[] = [];
  const sourceFile = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node) => `${name}:${sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`;
  const visit = (node: ts.Node) => {
    if (
      ts.isPropertyAccessExpression(node) &&
      ['claim', 'find', 'update', 'release'].includes(node.name.text) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'idempotency'
    )
      found.push(at(node));
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      ['send', 'json'].includes(node.left.name.text)
    )
      found.push(at(node.left));
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** The node a local `$ref` (`#/components/parameters/IdempotencyKey`) points to. */
const resolve = (doc: Record<string, unknown>, ref: string) =>
  ref
    .slice(2)
    .split('/')
    .reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, doc) as { name?: string; in?: string };

function serverFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
      else if (entry.name.endsWith('.ts')) files.push(path.relative(root, path.join(dir, entry.name)));
  };
  walk(path.join(root, 'server'));
  return files;
}

describe('Idempotency-Key', () => {
  it('is kept by one module: no other code touches the saved answers or replaces an answer’s send', () => {
    const files = serverFiles().filter((f) => !allowed.has(f) && !f.startsWith('server/store/'));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => keyHandling(f, readFileSync(path.join(root, f), 'utf8')))).toEqual([]);
    // The check finds the forms it refuses.
    const planted = 'await uow.idempotency.claim(saved);\nres.send = (body) => send(body);\nconst x = res.idempotency;';
    expect(keyHandling('planted.ts', planted)).toEqual(['planted.ts:1: uow.idempotency.claim', 'planted.ts:2: res.send']);
  });

  it('is taken exactly by the operations whose contract says x-retry: {repeat: key}, which document the header', () => {
    for (const api of ['current', 'legacy', 'workforce']) {
      const doc = parse(readFileSync(path.join(root, 'generated', `${api}.openapi.yaml`), 'utf8'));
      const problems: string[] = [];
      for (const [p, item] of Object.entries<
        Record<string, { parameters?: ({ name?: string; in?: string } | { $ref: string })[]; 'x-retry'?: { repeat?: string } }>
      >(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (typeof op !== 'object' || !op || !('responses' in op)) continue;
          const header = (op.parameters ?? [])
            .map((q) => ('$ref' in q ? resolve(doc, String(q.$ref)) : q))
            .some((q) => q.in === 'header' && q.name === 'Idempotency-Key');
          const keyed = op['x-retry']?.repeat === 'key';
          if (header !== keyed) problems.push(`${api} ${method.toUpperCase()} ${p}: header ${header}, x-retry key ${keyed}`);
          if (op['x-retry'] && method !== 'post') problems.push(`${api} ${method.toUpperCase()} ${p}: x-retry on a ${method}`);
        }
      }
      expect(problems, api).toEqual([]);
    }
  });
});
