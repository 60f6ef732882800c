/** Deterministic randomness for the data set: the same seed gives the same rows, ids included. */
/** sfc32 seeded through splitmix32: fast, and the same seed gives the same data set. */
export class Rand {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }
  /** [0, 1) */
  next(): number {
    return this.u32() / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(10));
    return s;
  }
  /** A log-normal amount in smallest units: median `median`, clamped to [min, max]. */
  amount(median: number, sigma: number, min: number, max: number): number {
    const z = Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
    return Math.min(max, Math.max(min, Math.round(median * Math.exp(sigma * z))));
  }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }
}

const hex = (v: number, width: number) => v.toString(16).padStart(width, '0');

/** A uuid v7 for instant `ms` (the layout of src/deps.ts uuidV7Ids: time, 12 counter bits, variant, random). */
export function uuid7(ms: number, r: Rand): string {
  const hi = Math.floor(ms / 65536);
  const lo = ms % 65536;
  return `${hex(hi, 8)}-${hex(lo, 4)}-${hex(0x7000 | (r.u32() & 0xfff), 4)}-${hex(0x8000 | (r.u32() & 0x3fff), 4)}-${hex(r.u32() & 0xffff, 4)}${hex(r.u32(), 8)}`;
}
