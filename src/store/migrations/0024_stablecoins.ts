/**
 * Stablecoins (issue #24): the area's tables.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0024Stablecoins: Migration = {
  name: '0024_stablecoins',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(_db: Kysely<any>) {},
};
