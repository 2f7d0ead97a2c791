// The segmentation player's painted map (label/players/segmentation/mask.ts): what a brush stroke
// and a fill paint, and the draft's run-length code, which must give back exactly the same map.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LabelMap } from '../../../label/players/segmentation/mask.ts';

const painted = (m: LabelMap, value: number) => m.data.filter((v) => v === value).length;

describe('the painted map', () => {
  it('paints the pixels whose middle lies within the radius of the stroke, and at least the one under the pointer', () => {
    const m = new LabelMap(20, 10);
    m.stroke({ x: 2.5, y: 5.5 }, { x: 12.5, y: 5.5 }, 1, 3);
    // Rows 4 to 6 between the ends (middles within 1 px), and one pixel beyond each end.
    expect(painted(m, 3)).toBe(11 * 3 + 2);
    expect(m.data[5 * 20 + 1]).toBe(3);
    expect(m.data[5 * 20 + 14]).toBe(0);
    const dot = new LabelMap(5, 5);
    dot.stroke({ x: 2.2, y: 2.9 }, { x: 2.2, y: 2.9 }, 0.1, 1);
    expect([...dot.data].indexOf(1)).toBe(2 * 5 + 2);
    expect(painted(dot, 1)).toBe(1);
  });

  it('fills the 4-connected region of one value, and stops at another value (a diagonal does not leak)', () => {
    const m = new LabelMap(6, 6);
    // A ring of 1 around (2, 2)-(3, 3), open only diagonally at a corner.
    for (const [x, y] of [
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [1, 2],
      [4, 2],
      [1, 3],
      [4, 3],
      [1, 4],
      [2, 4],
      [3, 4],
    ] as const)
      m.data[y * 6 + x] = 1;
    expect(m.fill(2, 2, 2)).toEqual({ left: 2, top: 2, right: 4, bottom: 4 });
    expect(painted(m, 2)).toBe(4);
    expect(m.fill(2, 2, 2)).toBeNull();
    expect(m.fill(0, 0, 5)).not.toBeNull();
    expect(painted(m, 5)).toBe(36 - 4 - 11);
  });

  it('codes the map for the draft so that it comes back exactly, and refuses runs of another size or garbage', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 70_000 })),
        (w, h, seeds) => {
          const m = new LabelMap(w, h);
          seeds.forEach((s, i) => {
            m.data.fill(s % 65_536, (s * 7 + i) % (w * h), ((s * 7 + i) % (w * h)) + (s % 50));
          });
          const back = LabelMap.fromRuns(w, h, m.toRuns());
          expect(back?.data).toEqual(m.data);
        },
      ),
    );
    const m = new LabelMap(4, 4);
    expect(LabelMap.fromRuns(4, 5, m.toRuns())).toBeNull();
    expect(LabelMap.fromRuns(4, 4, 'not base64 !')).toBeNull();
    expect(LabelMap.fromRuns(4, 4, 42)).toBeNull();
  });
});
