// The video player's tracks (label/players/video/tracks.ts): a shape at every frame from its
// keyframes (interpolated in between, held after the last), a track's end, the answer's frames
// (valid for the contract), and the draft's round trip.
import { describe, expect, it } from 'vitest';
import { geometriesOf, type Params, type Shape } from '../../../label/players/image/model.ts';
import { eventsOf, setKeyframe, shapeAt, trackDraft, trackOut, tracksOf, type Track } from '../../../label/players/video/tracks.ts';
import { asGeneration, makeValidator } from '../../support/spec.ts';

const geometries = geometriesOf({
  geometries: {
    box: { objects_to_annotate: ['car'] },
    ellipse: { objects_to_annotate: ['wheel'] },
    polygon: { objects_to_annotate: ['road'] },
  },
} as unknown as Params);
const box = (left: number, width = 80): Shape => ({ uuid: 'u', type: 'box', label: 'car', left, top: 120, width, height: 40 });
const track = (keys: [number, Shape][], end: number | null = null): Track => ({
  uuid: '5d6e7f80-9a1b-4c2d-8e3f-405162738495',
  type: keys[0]?.[1].type ?? 'box',
  label: keys[0]?.[1].label ?? 'car',
  keys: keys.map(([frame, shape]) => ({ frame, shape })),
  end,
});
const schema = makeValidator(asGeneration('workforce'));

describe('video tracks', () => {
  it('interpolates a box between keyframes, holds it after the last, and is absent before the first and after its end', () => {
    const t = track([
      [2, box(40)],
      [6, box(200, 100)],
    ]);
    expect(shapeAt(t, 1)).toBeNull();
    expect(shapeAt(t, 2)).toMatchObject({ left: 40, width: 80, uuid: t.uuid });
    expect(shapeAt(t, 3)).toMatchObject({ left: 80, width: 85 });
    expect(shapeAt(t, 5)).toMatchObject({ left: 160, width: 95 });
    expect(shapeAt(t, 9)).toMatchObject({ left: 200, width: 100 });
    t.end = 4;
    expect(shapeAt(t, 5)).toBeNull();
    // A keyframe after the end moves the end to it.
    setKeyframe(t, 8, box(10));
    expect(t.end).toBe(8);
    expect(t.keys.map((k) => k.frame)).toEqual([2, 6, 8]);
  });

  it('turns an ellipse the short way round, and holds a polygon whose vertex count changes', () => {
    const e = (rotation: number): Shape => ({ uuid: 'u', type: 'ellipse', label: 'wheel', x: 10, y: 10, rx: 5, ry: 3, rotation });
    const wheel = track([
      [0, e(350)],
      [2, e(10)],
    ]);
    expect(shapeAt(wheel, 1)).toMatchObject({ rotation: 0 });
    const vertices = (n: number) => Array.from({ length: n }, (_, i) => ({ x: i * 10, y: n }));
    const road = track([
      [0, { uuid: 'u', type: 'polygon', label: 'road', vertices: vertices(3) }],
      [4, { uuid: 'u', type: 'polygon', label: 'road', vertices: vertices(4) }],
    ]);
    expect(shapeAt(road, 2)).toMatchObject({ vertices: vertices(3) });
    expect(shapeAt(road, 4)).toMatchObject({ vertices: vertices(4) });
  });

  it('answers the shape in every frame from the first keyframe to the end (the last frame at most), valid for the contract', () => {
    const t = track([
      [1, box(40)],
      [3, box(120)],
    ]);
    const out = trackOut(t, 4);
    expect(out.frames).toEqual([
      { frame: 1, left: 40, top: 120, width: 80, height: 40 },
      { frame: 2, left: 80, top: 120, width: 80, height: 40 },
      { frame: 3, left: 120, top: 120, width: 80, height: 40 },
      { frame: 4, left: 120, top: 120, width: 80, height: 40 },
    ]);
    const valid = schema('#/components/schemas/VideoAnnotationTrack');
    expect(valid(out), JSON.stringify(valid.errors)).toBe(true);
    t.end = 2;
    expect((trackOut(t, 4).frames as unknown[]).length).toBe(2);
  });

  it('keeps keyframes, end and attributes through the draft, and leaves out what is not a track or event of the task', () => {
    const t = {
      ...track(
        [
          [0, box(40)],
          [4, box(200)],
        ],
        3,
      ),
      attributes: { occluded: 'no' },
    };
    const draft = { tracks: [trackDraft(t), { uuid: 'x', type: 'cuboid', label: 'car', keys: [{ frame: 0 }] }, 'junk'] };
    const [back, ...more] = tracksOf(JSON.parse(JSON.stringify(draft)), geometries);
    expect(more).toEqual([]);
    expect(back).toMatchObject({ uuid: t.uuid, type: 'box', label: 'car', end: 3, attributes: { occluded: 'no' } });
    expect(back?.keys.map((k) => [k.frame, (k.shape as { left: number }).left])).toEqual([
      [0, 40],
      [4, 200],
    ]);
    expect(
      eventsOf(
        {
          events: [
            { label: 'lane change', start: 1, end: 3 },
            { label: 'other', start: 0, end: 0 },
          ],
        },
        ['lane change'],
      ),
    ).toEqual([{ label: 'lane change', start: 1, end: 3 }]);
  });
});
