// The client's type tests (type-checks.ts beside this file) hold: the compiler, run on that file with
// the project's settings, reports nothing there; and it does report each kind of mistake those tests
// are written to catch, when one is planted in an in-memory copy of the file.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { root } from '../../support/spec.ts';

const checks = path.join(root, 'test', 'unit', 'client', 'type-checks.ts');
const config = ts.parseJsonConfigFileContent(ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root);
let previous: ts.Program | undefined;
/** The other files parsed once: the second compile reuses the first one's work. */
const parsed = new Map<string, ts.SourceFile | undefined>();

/** The compiler's messages about type-checks.ts, each `from` replaced by its `to` when given. */
function diagnostics(plants: { from: string; to: string }[] = []): string[] {
  let text = readFileSync(checks, 'utf8');
  for (const { from, to } of plants) {
    expect(text, 'the planted change must apply').toContain(from);
    text = text.replace(from, to);
  }
  const host = ts.createCompilerHost(config.options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError) => {
    if (path.normalize(name) === checks) return ts.createSourceFile(name, text, language);
    if (!parsed.has(name)) parsed.set(name, getSourceFile(name, language, onError));
    return parsed.get(name);
  };
  const program = ts.createProgram([checks], config.options, host, previous);
  previous = program;
  const source = program.getSourceFile(checks)!;
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  );
}

describe('client types', { timeout: 60_000 }, () => {
  it('compile as written: every expected type holds, every @ts-expect-error meets its error', () => {
    expect(diagnostics()).toEqual([]);
  });

  it('report each kind of mistake they guard against, when planted', () => {
    const found = diagnostics([
      // A wrong expected type.
      { from: 'expectTypeOf(res.status).toEqualTypeOf<200>();', to: 'expectTypeOf(res.status).toEqualTypeOf<404>();' },
      // A request body of the wrong shape, its @ts-expect-error gone.
      { from: '  // @ts-expect-error categories is a list of strings\n', to: '' },
      // An expected error that does not happen.
      {
        from: "  await client.tasks.create('categorization', text);\n",
        to: "  // @ts-expect-error planted: this call is valid\n  await client.tasks.create('categorization', text);\n",
      },
    ]).join('\n');
    expect(found).toMatch(/404/);
    expect(found).toMatch(/Type 'string' is not assignable to type 'string\[\]'/);
    expect(found).toMatch(/Unused '@ts-expect-error' directive/);
  });
});
