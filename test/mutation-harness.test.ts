// The mutation run's own tools (npm run mutation:sample, npm run mutation:score): the seeded draw
// of syntax nodes, the `mutate` patterns it gives Stryker, and the score over a report.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module without declarations (Stryker loads it too)
import { drawn, sampledMutatePatterns, sampleOptions } from './mutation/sample.mjs';

const at = (line: number, column: number) => ({ start: { line, column }, end: { line, column: column + 5 } });

describe('mutation sample', () => {
  it('draws a share of the nodes, the same on every call, another set for another seed', () => {
    const locations = Array.from({ length: 20_000 }, (_, i) => at(1 + Math.floor(i / 100), i % 100));
    const pick = (seed: string) => locations.filter((l) => drawn('server/x.ts', l, { rate: 0.15, seed }));
    const first = pick('1');
    expect(first.length / locations.length).toBeGreaterThan(0.14);
    expect(first.length / locations.length).toBeLessThan(0.16);
    expect(pick('1')).toEqual(first);
    expect(pick('2')).not.toEqual(first);
  });

  it('reads MUTATION_SAMPLE and MUTATION_SEED, and refuses a share outside (0, 1)', () => {
    expect(sampleOptions({})).toBeNull();
    expect(sampleOptions({ MUTATION_SAMPLE: '0.15' })).toEqual({ rate: 0.15, seed: '1' });
    expect(sampleOptions({ MUTATION_SAMPLE: '0.2', MUTATION_SEED: '7' })).toEqual({ rate: 0.2, seed: '7' });
    expect(() => sampleOptions({ MUTATION_SAMPLE: '1.5' })).toThrow(/MUTATION_SAMPLE/);
  });

  it('gives Stryker one range per drawn node; a larger share keeps every node of a smaller one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mutation-sample-'));
    const file = path.join(dir, 'rules.ts');
    writeFileSync(
      file,
      Array.from({ length: 40 }, (_, i) => `export const f${i} = (a: number) => (a > ${i} && a !== 3 ? 'big ${i}' : a + ${i});`).join('\n'),
    );
    const small: string[] = await sampledMutatePatterns([file], { rate: 0.2, seed: '1' });
    const large: string[] = await sampledMutatePatterns([file], { rate: 0.6, seed: '1' });
    expect(small.length).toBeGreaterThan(0);
    expect(large.length).toBeGreaterThan(small.length);
    for (const p of small) expect(p).toMatch(/^.+rules\.ts:\d+:\d+-\d+:\d+$/);
    expect(large).toEqual(expect.arrayContaining(small));
  });
});

describe('mutation score', () => {
  const score = (report: unknown, env: Record<string, string> = {}) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mutation-score-')), 'mutation.json');
    writeFileSync(file, JSON.stringify(report));
    return execFileSync(process.execPath, ['--import', 'tsx', 'test/mutation/score.ts', file], {
      encoding: 'utf8',
      env: { ...process.env, MUTATION_SAMPLE: '', ...env },
    });
  };
  const mutant = (id: number, status: string, line = id) => ({
    id: String(id),
    mutatorName: 'EqualityOperator',
    replacement: 'a >= b',
    location: at(line, 4),
    status,
  });
  const source = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');

  it('counts killed and timed-out mutants over the valid ones, lists survivors, leaves out ignored ones', () => {
    const out = score({
      files: {
        'server/a.ts': {
          source,
          mutants: [
            mutant(1, 'Killed'),
            mutant(2, 'Timeout'),
            mutant(3, 'Survived'),
            mutant(4, 'NoCoverage'),
            mutant(5, 'Ignored'),
            mutant(6, 'Killed'),
          ],
        },
      },
    });
    expect(out).toContain('**Score: 60.0 %** (3 of 5 valid mutants killed or timed out)');
    expect(out).toContain('- survived server/a.ts:3 EqualityOperator: `line 3` → `a >= b`');
    expect(out).toContain('- no coverage server/a.ts:4');
  });

  it('in a sample, counts only the drawn mutants and gives an interval', () => {
    const sample = { rate: 0.5, seed: '1' };
    const mutants = Array.from({ length: 20 }, (_, i) => mutant(i + 1, i % 4 === 0 ? 'Survived' : 'Killed'));
    const counted = mutants.filter((m) => drawn('server/a.ts', m.location, sample));
    const killed = counted.filter((m) => m.status === 'Killed').length;
    const out = score({ files: { 'server/a.ts': { source, mutants } } }, { MUTATION_SAMPLE: '0.5', MUTATION_SEED: '1' });
    expect(out).toContain(`${counted.length} drawn mutants (${mutants.length - counted.length} more were tested`);
    expect(out).toContain(
      `**Score: ${((100 * killed) / counted.length).toFixed(1)} %** (${killed} of ${counted.length} valid mutants killed or timed out), 95 % interval`,
    );
  });
});
