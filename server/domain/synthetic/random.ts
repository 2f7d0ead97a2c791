// Test mode's synthetic answers (synthetic.ts): seeded randomness, and the words and picks of a
// synthetic worker. FNV-1a hashes the seed into a 32-bit state, mulberry32 steps it. Tiny, fast
// and good enough to make picks look varied; never Math.random or the clock, which would make a
// task's answer change between reads.

export class SeededRandom {
  private state: number;

  constructor(seed: string) {
    let hash = 0x811c9dc5;
    for (let i = 0; i < seed.length; i++) {
      hash ^= seed.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    this.state = hash >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer from `min` to `max`, both included (`min` when the range is empty). */
  int(min: number, max: number): number {
    return max <= min ? min : min + Math.floor(this.next() * (max - min + 1));
  }

  /** A number from `min` to `max` with one decimal place, inside the bounds. */
  decimal(min: number, max: number): number {
    return clamp(round1(min + this.next() * (max - min)), min, max);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** `count` distinct items, in their original order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set(this.shuffle(items.map((_, i) => i)).slice(0, count));
    return items.filter((_, i) => chosen.has(i));
  }

  /** A random (version 4 shaped) UUID. */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(0, 15).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${this.pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Small shared helpers.

export const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
export const round1 = (value: number) => Math.round(value * 10) / 10;
export const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * `count` labels drawn from `labels`: each label at least once when `count` allows it, the rest
 * repeats, in random order.
 */
export function coveringLabels(rng: SeededRandom, labels: readonly string[], count: number): string[] {
  if (labels.length === 0) return [];
  const chosen = rng.shuffle(labels).slice(0, count);
  while (chosen.length < count) chosen.push(rng.pick(labels));
  return rng.shuffle(chosen);
}

const WORDS = [
  'amber',
  'harbor',
  'quiet',
  'river',
  'signal',
  'orchard',
  'copper',
  'meadow',
  'lantern',
  'granite',
  'willow',
  'summit',
  'canvas',
  'ember',
  'falcon',
  'glacier',
  'horizon',
  'island',
  'kernel',
  'lotus',
  'marble',
  'nectar',
  'pebble',
  'quartz',
  'raven',
  'saffron',
  'timber',
  'velvet',
  'harvest',
  'beacon',
] as const;

/** A few plain words: the text a synthetic worker writes. */
export function phrase(rng: SeededRandom, minWords: number, maxWords: number): string {
  return Array.from({ length: rng.int(minWords, maxWords) }, () => rng.pick(WORDS)).join(' ');
}

/** `text` cut to at most `maxCharacters` code points, never empty and without a trailing space. */
export function truncate(text: string, maxCharacters: number): string {
  const cut = Array.from(text).slice(0, Math.max(1, maxCharacters)).join('').trimEnd();
  return cut.length > 0 ? cut : 'x';
}
