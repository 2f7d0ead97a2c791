// docs/internal/seed-map.md points at the contract: every operation and component it names exists.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { apis, asGeneration, loadBundle, operations, root } from '../support/spec.ts';

it('names only operations, schemas, parameters and tags that exist in the contract', () => {
  const map = readFileSync(path.join(root, 'docs', 'internal', 'seed-map.md'), 'utf8');
  const tokens = [...map.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  const ops = new Set(apis.flatMap((g) => operations(asGeneration(g)).map((o) => `${o.method.toUpperCase()} ${o.path}`)));
  const components = new Set(
    apis.flatMap((g) => {
      const doc = loadBundle(asGeneration(g));
      const c = doc.components ?? {};
      return [
        ...Object.keys(c.schemas ?? {}),
        ...Object.keys(c.parameters ?? {}),
        ...Object.keys(c.responses ?? {}),
        ...(doc.tags ?? []).map((t: { name: string }) => t.name),
      ];
    }),
  );
  const namedOps = tokens.filter((t) => /^(GET|POST|PUT|PATCH|DELETE) \//.test(t));
  const namedComponents = tokens.filter((t) => /^[A-Z][A-Za-z]+$/.test(t));
  expect(namedOps.filter((t) => !ops.has(t))).toEqual([]);
  expect(namedComponents.filter((t) => !components.has(t))).toEqual([]);
  // Every endpoint of the contract is named somewhere in the map.
  expect([...ops].filter((o) => !namedOps.includes(o) && !/_tasks\//.test(o))).toEqual([]);
  expect(namedOps.length).toBeGreaterThan(40);
  expect(namedComponents.length).toBeGreaterThan(100);
});
