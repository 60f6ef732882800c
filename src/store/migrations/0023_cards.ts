/**
 * Cards (issue #24): the area's tables.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0023Cards: Migration = {
  name: '0023_cards',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(_db: Kysely<any>) {},
};
