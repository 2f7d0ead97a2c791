// The conformance checks as separate units, one (generation, check) pair per vitest test: for the
// mutation run (Stryker's per-test coverage runs only the checks reaching a mutant) and test/conformance.test.ts.
// Each unit runs through runConformance with a fresh SuiteState, so that what a check needs
// (fixtures: projects, batches, tasks) is made inside it and counted for it.
import { behaviourChecks } from '../../conformance/checks/index.ts';
import { coreChecks } from '../../conformance/core-checks.ts';
import { SuiteState } from '../../conformance/fixtures.ts';
import { generatedChecks } from '../../conformance/generated-checks.ts';
import type { Check, Generation } from '../../conformance/types.ts';

/** Every check of a full run, in the runner's order (the same list runConformance builds). */
function allChecks(state: SuiteState = new SuiteState()): Check[] {
  return [...coreChecks(state), ...behaviourChecks, ...generatedChecks(state)];
}

export interface Unit {
  generation: Generation;
  id: string;
  /** A fresh instance of the check (its fixtures state is new). */
  check(): Check;
}

/** The (generation, check) pairs of a full run, generation by generation as runConformance plans them. */
export function checkUnits(generations: Generation[] = ['current', 'legacy']): Unit[] {
  const units: Unit[] = [];
  for (const generation of generations) {
    for (const check of allChecks()) {
      if (!(check.generations ?? ['current', 'legacy']).includes(generation)) continue;
      const id = check.id;
      units.push({
        generation,
        id,
        check() {
          const fresh = allChecks().find((c) => c.id === id);
          if (!fresh) throw new Error(`no check ${id}`);
          return fresh;
        },
      });
    }
  }
  return units;
}
