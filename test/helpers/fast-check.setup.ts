/**
 * The unit lane's property tests draw from the file's seed (test/helpers/random.ts: its path and
 * TEST_SEED), like every other random test value: a run replays as it happened, and TEST_SEED=<n>
 * tries other cases. fast-check prints the seed of a failing property.
 */
import fc from 'fast-check';
import { beforeAll } from 'vitest';
import { testSeed } from './random.ts';

beforeAll(() => {
  fc.configureGlobal({ seed: testSeed() | 0 });
});
