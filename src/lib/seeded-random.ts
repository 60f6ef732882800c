/**
 * The deterministic random bit generator behind CORRIDOR_SEED: HMAC-SHA256 in counter mode (the
 * construction of NIST SP 800-108's KDF in counter mode), node:crypto only. Block i of a stream is
 * HMAC(key, label ‖ 0x00 ‖ uint64be(i)); a stream's bytes are its blocks in order. The same key and
 * label always give the same bytes; distinct labels give independent streams, so each consumer (the
 * ids of one type, the account-detail generator) has its own and cannot shift another's by drawing
 * more or less, or at another moment.
 *
 * Not for secrets: the seed is a small number anyone can try (Deps.secretRng stays the system's).
 */
import { createHash, createHmac } from 'node:crypto';
import type { Rng } from '../deps.ts';

const BLOCK_BYTES = 32; // SHA-256

/**
 * The key every stream of a seeded run derives from: the seed and the instant the run's clock starts
 * at. The start is in the key so that a seeded server restarted over a store it already wrote to
 * (its clock then starts elsewhere: see lib/seeded-deps.ts) draws other ids and account numbers than
 * the ones stored, instead of colliding with them.
 */
export function seedKey(seed: number, startMs: number): Buffer {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a non-negative safe integer (got ${seed})`);
  return createHash('sha256').update(`corridor-seed\0${seed}\0${startMs}`).digest();
}

/** The stream `label` of `key`, as an Rng. */
export function seededRng(key: Buffer, label: string): Rng {
  const prefix = Buffer.from(`${label}\0`, 'utf8');
  let counter = 0n;
  let block: Buffer = Buffer.alloc(0);
  let offset = 0;
  const nextBlock = (): Buffer => {
    const index = Buffer.alloc(8);
    index.writeBigUInt64BE(counter);
    counter += 1n;
    return createHmac('sha256', key).update(prefix).update(index).digest();
  };
  return {
    bytes(n: number): Buffer {
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`byte count must be a non-negative integer (got ${n})`);
      const out = Buffer.alloc(n);
      let filled = 0;
      while (filled < n) {
        if (offset >= block.length) {
          block = nextBlock();
          offset = 0;
        }
        const take = Math.min(n - filled, BLOCK_BYTES - offset);
        block.copy(out, filled, offset, offset + take);
        offset += take;
        filled += take;
      }
      return out;
    },
  };
}
