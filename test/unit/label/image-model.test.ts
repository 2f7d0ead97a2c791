// The image player's pure parts (label/players/image/): the task's bounds, shapes kept inside the
// image, what blocks a submit, cuboids from a face, and which annotation attributes apply.
import { describe, expect, it } from 'vitest';
import { applicable, attributeDefs, attributesOut, missingAttribute } from '../../../label/players/image/attributes.ts';
import {
  cuboidFrom,
  fewestVertices,
  geometriesOf,
  shapeProblem,
  shapesOf,
  tidy,
  toElement,
  translate,
  type Params,
  type Shape,
} from '../../../label/players/image/model.ts';

const params = {
  attachment: 'https://example.com/a.jpg',
  geometries: {
    box: { objects_to_annotate: ['car'], min_width: '30', min_height: 20 },
    polygon: { objects_to_annotate: ['road'], min_vertices: 4, max_vertices: '6' },
    line: { objects_to_annotate: ['lane'] },
  },
} as unknown as Params;
const [box, polygon, line] = geometriesOf(params);

describe('the image model', () => {
  it('reads each geometry with its bounds, numbers given as digit strings too', () => {
    expect(box).toMatchObject({ kind: 'box', labels: ['car'], minWidth: 30, minHeight: 20 });
    expect(polygon).toMatchObject({ kind: 'polygon', minVertices: 4, maxVertices: 6 });
    expect(line).toMatchObject({ kind: 'line', minVertices: 1, maxVertices: Number.POSITIVE_INFINITY });
    expect(fewestVertices(polygon!)).toBe(4);
    expect(fewestVertices(line!)).toBe(2);
  });

  it('keeps shapes inside the image, and a move keeps the shape whole', () => {
    const b: Shape = { uuid: 'u', label: 'car', type: 'box', left: -10, top: 5, width: 50, height: 500 };
    expect(tidy(b, 100, 100)).toMatchObject({ left: 0, top: 5, width: 40, height: 95 });
    const p: Shape = {
      uuid: 'p',
      label: 'road',
      type: 'polygon',
      vertices: [
        { x: 10, y: 10 },
        { x: 30, y: 10 },
        { x: 20, y: 40 },
      ],
    };
    translate(p, -50, 100, 100, 100);
    expect(p.vertices).toEqual([
      { x: 0, y: 70 },
      { x: 20, y: 70 },
      { x: 10, y: 100 },
    ]);
    const e: Shape = { uuid: 'e', label: 'w', type: 'ellipse', x: 5, y: 5, rx: -3, ry: 4, rotation: -30 };
    expect(tidy(e, 100, 100)).toMatchObject({ rx: 3, rotation: 330 });
  });

  it('names what blocks a submit: size, vertex count, a label of another geometry', () => {
    expect(shapeProblem({ uuid: 'u', label: 'car', type: 'box', left: 0, top: 0, width: 29, height: 20 }, box)).toMatch(/smaller/);
    expect(shapeProblem({ uuid: 'u', label: 'car', type: 'box', left: 0, top: 0, width: 30, height: 20 }, box)).toBeNull();
    const tri = [
      { x: 0, y: 0 },
      { x: 1, y: 0 },
      { x: 0, y: 1 },
    ];
    expect(shapeProblem({ uuid: 'p', label: 'road', type: 'polygon', vertices: tri }, polygon)).toMatch(/fewer than the task's 4/);
    expect(shapeProblem({ uuid: 'p', label: 'car', type: 'polygon', vertices: [...tri, ...tri] }, polygon)).toMatch(/not one of/);
    expect(shapeProblem({ uuid: 'x', label: 'x', type: 'point', x: 1, y: 1 }, undefined)).toMatch(/no point geometry/);
  });

  it('makes a cuboid of its face and side, the side edge parallel to the face', () => {
    const v = cuboidFrom({ left: 10, top: 10, width: 100, height: 100 }, { x: 150, y: 0 });
    expect(v.map((c) => c.description)).toEqual([
      'face-topleft',
      'face-bottomleft',
      'face-topright',
      'face-bottomright',
      'side-topcorner',
      'side-bottomcorner',
    ]);
    expect(v[5]).toMatchObject({ x: 150, y: 80 });
    expect(cuboidFrom({ left: 10, top: 10, width: 100, height: 100 })).toHaveLength(4);
  });

  it('reads a draft back to the same elements, and drops what is not a shape of the task', () => {
    const elements = [
      { uuid: 'a', type: 'box', label: 'car', left: 1, top: 2, width: 3, height: 4 },
      { uuid: 'b', type: 'line', label: 'lane', vertices: [{ x: 1, y: 2 }] },
      { uuid: 'c', type: 'ellipse', label: 'wheel', x: 1, y: 1, rx: 1, ry: 1, rotation: 0 },
      { type: 'box', label: 'no uuid' },
    ];
    expect(shapesOf({ annotations: elements }, geometriesOf(params)).map(toElement)).toEqual(elements.slice(0, 2));
  });
});

describe('annotation attributes', () => {
  const defs = attributeDefs({
    kind: { choices: ['sedan', 'van'] },
    parked: { choices: ['Yes', 'No'], conditions: { label_condition: { label: 'car' } } },
    riders: { type: 'number', conditions: { attribute_conditions: [{ parked: 'No', kind: 'van' }] } },
    depth: { type: 'offset' },
    tows: { type: 'linked' },
  });
  const car = (attributes: Record<string, string | number>): Shape => ({
    uuid: 'a',
    label: 'car',
    type: 'box',
    left: 0,
    top: 0,
    width: 10,
    height: 10,
    attributes,
  });

  it('asks an attribute when its label condition and every attribute condition hold, in a chain', () => {
    const names = (s: Shape) => applicable(defs, s).map((d) => d.name);
    expect(names(car({}))).toEqual(['kind', 'parked', 'depth', 'tows']);
    expect(names(car({ parked: 'No', kind: 'van' }))).toContain('riders');
    expect(names(car({ parked: 'No', kind: 'sedan' }))).not.toContain('riders');
    // `riders` hangs on `parked`, which a truck is not asked: neither is asked.
    expect(names({ ...car({ parked: 'No', kind: 'van' }), label: 'truck' })).toEqual(['kind', 'depth', 'tows']);
    // An offset measures a box: not asked of a point.
    expect(names({ uuid: 'p', label: 'car', type: 'point', x: 0, y: 0 })).not.toContain('depth');
  });

  it('sends only what is asked, and waits for every answer but a link', () => {
    const s = car({ kind: 'sedan', parked: 'Yes', riders: 3, depth: 4 });
    expect(attributesOut(defs, s)).toEqual({ kind: 'sedan', parked: 'Yes', depth: 4 });
    expect(missingAttribute(defs, s)).toBeUndefined();
    expect(missingAttribute(defs, car({ kind: 'sedan' }))?.name).toBe('parked');
    expect(attributesOut([], s)).toBeUndefined();
  });
});
