// The lidar player's pure parts (label/players/lidar/cloud.ts): reading a frame file, the draft's
// run-length coding of labels, undo and redo of lassos, and which projected points a lasso holds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyLasso,
  decodeLabels,
  encodeLabels,
  insideLasso,
  type LassoStep,
  readFrame,
  UNLABELED,
} from '../../../label/players/lidar/cloud.ts';
import { Undo } from '../../../label/undo.ts';

/** Column-major 4 × 4 identity: a point's x and y are its place on screen (-1..1), z its depth. */
const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

describe('readFrame', () => {
  it('reads x, y, z of every point in order, ignoring other keys', () => {
    expect(
      Array.from(
        readFrame({
          points: [
            { x: 1, y: 2, z: 3, intensity: 9 },
            { x: -0.5, y: 0, z: 10 },
          ],
        }) as Float32Array,
      ),
    ).toEqual([1, 2, 3, -0.5, 0, 10]);
  });

  it('says what is wrong with a file it cannot read', () => {
    expect(readFrame({ point: [] })).toBe('the file has no "points" array');
    expect(readFrame(null)).toBe('the file has no "points" array');
    expect(
      readFrame({
        points: [
          { x: 1, y: 2, z: 3 },
          { x: 1, y: '2', z: 3 },
        ],
      }),
    ).toBe('point 1 has no finite x, y and z');
    expect(readFrame({ points: [null] })).toBe('point 0 has no finite x, y and z');
  });
});

describe('the draft coding of labels', () => {
  it('gives back exactly the labels it was given, whatever they are', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: -1, max: 999 }), { maxLength: 3000 }),
        (labelCount, raw) => {
          const labels = Int16Array.from(raw, (l) => Math.min(l, labelCount - 1));
          const back = decodeLabels(encodeLabels(labels), labels.length, labelCount);
          expect(back && Array.from(back)).toEqual(Array.from(labels));
        },
      ),
    );
  });

  it('keeps a frame labelled in runs small: 100,000 points in three runs take a few bytes', () => {
    const labels = new Int16Array(100_000).fill(UNLABELED);
    labels.fill(2, 20_000, 60_000);
    expect(encodeLabels(labels).length).toBeLessThan(20);
  });

  it('refuses labels that do not fit the frame or the task', () => {
    const coded = encodeLabels(Int16Array.from([0, 0, 1, -1, 2]));
    expect(decodeLabels(coded, 4, 3)).toBeUndefined();
    expect(decodeLabels(coded, 6, 3)).toBeUndefined();
    expect(decodeLabels(coded, 5, 2)).toBeUndefined();
    expect(decodeLabels('not base64!', 5, 3)).toBeUndefined();
    expect(Array.from(decodeLabels(coded, 5, 3) as Int16Array)).toEqual([0, 0, 1, -1, 2]);
  });
});

describe('a lasso as an undo step', () => {
  it('applies a lasso to the points that change, and undoes and redoes it', () => {
    const labels = Int16Array.from([-1, 0, -1, 1]);
    const frames = (f: number) => (f === 0 ? labels : undefined);
    const history = new Undo<LassoStep>(100);
    const lasso = (indices: number[], after: number) => {
      const step = applyLasso(0, labels, Uint32Array.from(indices), after, frames);
      if (step) history.push(step);
      return step;
    };
    const step = lasso([0, 1, 2], 0);
    expect(Array.from(step?.indices ?? [])).toEqual([0, 2]);
    expect(Array.from(labels)).toEqual([0, 0, 0, 1]);
    expect(lasso([0, 1], 0)).toBeUndefined();
    lasso([3], -1);
    expect(Array.from(labels)).toEqual([0, 0, 0, -1]);
    expect(history.undo()?.after).toBe(-1);
    expect(Array.from(labels)).toEqual([0, 0, 0, 1]);
    history.undo();
    expect(Array.from(labels)).toEqual([-1, 0, -1, 1]);
    expect(history.undo()).toBeUndefined();
    history.redo();
    expect(Array.from(labels)).toEqual([0, 0, 0, 1]);
    // A new lasso after an undo drops what could have been redone.
    history.undo();
    lasso([1], 1);
    expect(history.redo()).toBeUndefined();
  });

  it('keeps at most its limit of steps', () => {
    const labels = new Int16Array(10).fill(-1);
    const history = new Undo<LassoStep>(3);
    for (let i = 0; i < 5; i++) {
      const step = applyLasso(0, labels, Uint32Array.from([i]), 0, () => labels);
      if (step) history.push(step);
    }
    let undone = 0;
    while (history.undo()) undone++;
    expect(undone).toBe(3);
    expect(Array.from(labels)).toEqual([0, 0, -1, -1, -1, -1, -1, -1, -1, -1]);
  });
});

describe('insideLasso', () => {
  // On a 200 × 100 screen under the identity, x = -1..1 maps to 0..200 px, y = 1..-1 to 0..100 px.
  const positions = Float32Array.from(
    [
      [0, 0, 0], // (100, 50): inside
      [0.5, 0.5, 0], // (150, 25): outside the triangle, inside its bounding box
      [-0.9, -0.9, 0], // (10, 95): outside
      [0, 0, 2], // inside on screen, beyond the far plane
      [0.1, 0.1, 0.5], // (110, 45): inside the box, outside the triangle
    ].flat(),
  );
  const triangle = [60, 20, 160, 80, 60, 80];

  it('finds the points whose projection lies inside the polygon, within the depth range', () => {
    expect(Array.from(insideLasso(positions, identity, 200, 100, [40, 10, 160, 10, 160, 90, 40, 90]))).toEqual([0, 1, 4]);
    expect(Array.from(insideLasso(positions, identity, 200, 100, triangle))).toEqual([0]);
  });

  it('takes only the points `keep` allows, and nothing for an outline of fewer than three corners', () => {
    expect(Array.from(insideLasso(positions, identity, 200, 100, [40, 10, 160, 10, 160, 90, 40, 90], (i) => i !== 0))).toEqual([1, 4]);
    expect(Array.from(insideLasso(positions, identity, 200, 100, [40, 10, 160, 90]))).toEqual([]);
  });

  it('skips points behind the camera', () => {
    // w = -1 for every point: all behind.
    const behind = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1];
    expect(Array.from(insideLasso(positions, behind, 200, 100, [0, 0, 200, 0, 200, 100, 0, 100]))).toEqual([]);
  });

  it('agrees with a point-by-point test of a concave outline', () => {
    // An L-shaped outline; the points on a grid; inside when in one of its two rectangles.
    const outline = [20, 10, 60, 10, 60, 50, 180, 50, 180, 90, 20, 90];
    const grid: number[] = [];
    for (let px = 5; px < 200; px += 10) for (let py = 5; py < 100; py += 10) grid.push(px / 100 - 1, 1 - py / 50, 0);
    const want: number[] = [];
    for (let i = 0; i < grid.length / 3; i++) {
      const sx = ((grid[3 * i] as number) + 1) * 100;
      const sy = (1 - (grid[3 * i + 1] as number)) * 50;
      if ((sx > 20 && sx < 60 && sy > 10 && sy < 90) || (sx > 20 && sx < 180 && sy > 50 && sy < 90)) want.push(i);
    }
    expect(Array.from(insideLasso(Float32Array.from(grid), identity, 200, 100, outline))).toEqual(want);
  });
});
