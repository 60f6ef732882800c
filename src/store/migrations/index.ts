/** Every schema migration, in the order it is applied. Never edit one that has shipped. */
import type { Kysely } from 'kysely';
import { m0001Init } from './0001_init.ts';

export interface Migration {
  name: string;
  // `any`: a migration creates the tables the typed Database describes, so it cannot use them.
  up(db: Kysely<any>): Promise<void>;
}

export const migrations: Migration[] = [m0001Init];
