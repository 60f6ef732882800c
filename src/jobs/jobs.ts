/**
 * Durable delayed work: a job is a row with a due time on the platform's clock, written in the
 * same transaction as the change that needs it, so a restart loses none.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export interface JobInput {
  id: string;
  platformId: string;
  kind: string;
  payload: unknown;
  dueAt: string;
  at: string;
}

export async function scheduleJob(trx: Kysely<Database>, j: JobInput): Promise<void> {
  await trx
    .insertInto('jobs')
    .values({
      id: j.id,
      platform_id: j.platformId,
      kind: j.kind,
      payload: JSON.stringify(j.payload),
      due_at: j.dueAt,
      status: 'PENDING',
      attempts: 0,
      locked_until: null,
      created_at: j.at,
      updated_at: j.at,
    })
    .execute();
}
