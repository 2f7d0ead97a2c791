import { describe, expect, it } from 'vitest';
import { cloneJson } from '../../../shared/json.ts';

describe('cloneJson (the copy of a request body the validator fills defaults into)', () => {
  it('copies a parsed body deeply: equal, and changing the copy leaves the original', () => {
    const body = JSON.parse('{"a":[1,{"b":"x"}],"c":{"d":null,"e":true},"f":1.5}');
    const copy = cloneJson(body);
    expect(copy).toStrictEqual(body);
    copy.a[1].b = 'changed';
    copy.c.g = 'added';
    expect(body).toStrictEqual(JSON.parse('{"a":[1,{"b":"x"}],"c":{"d":null,"e":true},"f":1.5}'));
  });

  it('keeps a "__proto__" key an own property, as JSON.parse made it, and touches no prototype', () => {
    const body = JSON.parse('{"__proto__":{"polluted":true},"x":1}');
    const copy = cloneJson(body);
    expect(Object.keys(copy)).toEqual(['__proto__', 'x']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"x":1}');
  });

  it('returns primitives as they are', () => {
    for (const v of [null, 0, 'text', false]) expect(cloneJson(v)).toBe(v);
  });
});
