/** The bulk import's tables (migration 0021), added to the store's Database type. */
import type { Selectable } from 'kysely';

export interface BulkImportJobsTable {
  id: string;
  platform_id: string;
  status: string;
  /** JSON: the CSV's column names, in file order. */
  header: string;
  total: number;
  processed: number;
  successful: number;
  failed: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface BulkImportChunksTable {
  job_id: string;
  seq: number;
  platform_id: string;
  /** JSON: `[[line, [field, …]], …]`. */
  rows: string;
}

export interface BulkImportErrorsTable {
  job_id: string;
  /** The row's 1-based line in the file. */
  row: number;
  platform_id: string;
  correlation_id: string;
  code: string;
  message: string;
  /** JSON, or null. */
  details: string | null;
}

export type BulkImportJobRow = Selectable<BulkImportJobsTable>;
export type BulkImportErrorRow = Selectable<BulkImportErrorsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    bulk_import_jobs: BulkImportJobsTable;
    bulk_import_chunks: BulkImportChunksTable;
    bulk_import_errors: BulkImportErrorsTable;
  }
}
