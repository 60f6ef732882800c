/**
 * Bulk customer import (issue #22): a job per uploaded CSV, its rows stored in chunks as the upload
 * streams in (so neither the upload nor the import holds the file in memory), and the per-row
 * errors. A chunk row is deleted in the transaction that imports it, together with the job's
 * counters, so a restarted process resumes at the first chunk not yet imported.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0021BulkImport: Migration = {
  name: '0021_bulk_import',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('bulk_import_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      // UPLOADING (not visible yet), PENDING, PROCESSING, COMPLETED, FAILED.
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('header', 'text', (c) => c.notNull())
      .addColumn('total', 'integer', (c) => c.notNull())
      .addColumn('processed', 'integer', (c) => c.notNull())
      .addColumn('successful', 'integer', (c) => c.notNull())
      .addColumn('failed', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .execute();
    await db.schema.createIndex('bulk_import_jobs_platform').on('bulk_import_jobs').columns(['platform_id', 'id']).execute();
    await db.schema
      .createTable('bulk_import_chunks')
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      // JSON: [[line, [field, …]], …]
      .addColumn('rows', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('bulk_import_chunks_pk', ['job_id', 'seq'])
      .execute();
    await db.schema.createIndex('bulk_import_chunks_platform').on('bulk_import_chunks').columns(['platform_id', 'job_id']).execute();
    await db.schema
      .createTable('bulk_import_errors')
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('row', 'integer', (c) => c.notNull())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('correlation_id', 'text', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('details', 'text')
      .addPrimaryKeyConstraint('bulk_import_errors_pk', ['job_id', 'row'])
      .execute();
    await db.schema.createIndex('bulk_import_errors_platform').on('bulk_import_errors').columns(['platform_id', 'job_id']).execute();
  },
};
