/**
 * Strong Customer Authentication (issue #23): the area's tables.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0022Sca: Migration = {
  name: '0022_sca',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(_db: Kysely<any>) {},
};
