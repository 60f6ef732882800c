/**
 * Bech32 and bech32m decoding (BIP-173, BIP-350), without BIP-173's 90-character limit: Spark
 * addresses are bech32m strings longer than that. Small enough to own rather than add a dependency.
 */

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const VALUES = new Map([...CHARSET].map((c, i) => [c, i]));
const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;

function polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GENERATORS[i]!;
  }
  return chk >>> 0;
}

function expandHrp(hrp: string): number[] {
  const out: number[] = [];
  for (const c of hrp) out.push(c.charCodeAt(0) >> 5);
  out.push(0);
  for (const c of hrp) out.push(c.charCodeAt(0) & 31);
  return out;
}

export interface Bech32Decoded {
  hrp: string;
  /** The data part as bytes (5-bit groups regrouped into 8; checksum removed). */
  data: Buffer;
  encoding: 'bech32' | 'bech32m';
}

/** Decodes a bech32 or bech32m string (one case throughout); null when it is not one. */
export function decodeBech32(text: string): Bech32Decoded | null {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) return null;
  const s = text.toLowerCase();
  const sep = s.lastIndexOf('1');
  if (sep < 1 || sep + 7 > s.length) return null;
  const hrp = s.slice(0, sep);
  for (const c of hrp) if (c.charCodeAt(0) < 33 || c.charCodeAt(0) > 126) return null;
  const words: number[] = [];
  for (const c of s.slice(sep + 1)) {
    const v = VALUES.get(c);
    if (v === undefined) return null;
    words.push(v);
  }
  const check = polymod([...expandHrp(hrp), ...words]);
  const encoding = check === BECH32_CONST ? 'bech32' : check === BECH32M_CONST ? 'bech32m' : undefined;
  if (!encoding) return null;
  const data = fromWords(words.slice(0, -6));
  return data ? { hrp, data, encoding } : null;
}

/** 5-bit groups to bytes; null when the padding is not zero or longer than 4 bits. */
function fromWords(words: number[]): Buffer | null {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  for (const w of words) {
    acc = (acc << 5) | w;
    bits += 5;
    while (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
    acc &= (1 << bits) - 1;
  }
  if (bits >= 5 || acc !== 0) return null;
  return Buffer.from(out);
}
