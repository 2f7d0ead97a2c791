// The labeling app's one undo mechanism (label/undo.ts): steps taken back and done again, and the
// snapshot history the image, video, named-entity and segmentation players record their work with.
import { describe, expect, it } from 'vitest';
import { Undo, undoKeys } from '../../../label/undo.ts';

describe('Undo', () => {
  it('takes steps back and does them again, last first; a new step drops what could be redone', () => {
    const log: string[] = [];
    const step = (name: string) => ({ undo: () => log.push(`undo ${name}`), redo: () => log.push(`redo ${name}`) });
    const history = new Undo();
    history.push(step('a'));
    history.push(step('b'));
    history.undo();
    history.undo();
    expect(history.undo()).toBeUndefined();
    history.redo();
    history.push(step('c'));
    expect(history.redo()).toBeUndefined();
    history.undo();
    expect(log).toEqual(['undo b', 'undo a', 'redo a', 'undo c']);
  });

  it('forgets the last step without taking it back (a change that changed nothing)', () => {
    const log: string[] = [];
    const history = new Undo();
    history.push({ undo: () => log.push('undo a'), redo: () => undefined });
    history.push({ undo: () => log.push('undo b'), redo: () => undefined });
    history.forget();
    history.undo();
    expect(log).toEqual(['undo a']);
  });
});

describe('Undo.snapshot', () => {
  it('undoes and redoes whole snapshots of work changed in place, each a copy', () => {
    let work: { shapes: string[] } = { shapes: [] };
    const history = Undo.snapshot(
      () => work,
      (state) => {
        work = state;
      },
    );
    history.record();
    work.shapes.push('box');
    history.record();
    work.shapes.push('polygon');
    expect(history.undo()).toBe(true);
    expect(work.shapes).toEqual(['box']);
    expect(history.undo()).toBe(true);
    expect(work.shapes).toEqual([]);
    expect(history.undo()).toBe(false);
    expect(history.redo()).toBe(true);
    expect(work.shapes).toEqual(['box']);
    expect(history.redo()).toBe(true);
    expect(work.shapes).toEqual(['box', 'polygon']);
    expect(history.redo()).toBe(false);
  });

  it('keeps at most its limit of snapshots', () => {
    let n = 0;
    const history = Undo.snapshot(
      () => n,
      (v) => {
        n = v;
      },
      (v) => v,
      2,
    );
    for (let i = 0; i < 5; i++) {
      history.record();
      n += 1;
    }
    while (history.undo());
    expect(n).toBe(3);
  });

  it('gives every player the same keys: Ctrl+Z, and Ctrl+Shift+Z or Ctrl+Y', () => {
    const keys = undoKeys(
      () => undefined,
      () => undefined,
      'Undo the last lasso',
    );
    expect(keys.map((k) => [k.keys, k.label])).toEqual([
      [['Ctrl+Z'], 'Undo the last lasso'],
      [['Ctrl+Shift+Z', 'Ctrl+Y'], 'Redo'],
    ]);
  });
});
