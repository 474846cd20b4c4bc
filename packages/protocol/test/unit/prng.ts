// Seeded PRNG for property-style tests: the same seed gives the same cases on every machine, so a
// failure is reproducible from the seed printed in the test name. mulberry32: tiny, fast, and more
// than random enough for choosing test inputs (not for anything cryptographic).
export type Prng = {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** Uniform bigint in [0, 2^bits). */
  bigint(bits: number): bigint;
  /** A string of `length` characters drawn from `alphabet` (code points, so astral characters work). */
  string(alphabet: string, length: number): string;
};

export function prng(seed: number): Prng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    pick: (items) => items[int(items.length)]!,
    bigint(bits) {
      let v = 0n;
      for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(int(0x10000));
      return v & ((1n << BigInt(bits)) - 1n);
    },
    string(alphabet, length) {
      const chars = [...alphabet];
      let s = '';
      for (let i = 0; i < length; i++) s += chars[int(chars.length)]!;
      return s;
    },
  };
}
