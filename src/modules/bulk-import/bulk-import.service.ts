/**
 * Bulk customer import from CSV (POST /customers/bulk/csv, GET /customers/bulk/jobs/{jobId}).
 *
 * - Upload: the file streams through the CSV reader; its header is checked at once (every documented
 *   required column present, no unknown or repeated column: else 400), and its rows are stored in
 *   chunks of CHUNK_ROWS, a few chunks per transaction, under a job in status UPLOADING that no
 *   read shows. A problem found later in the file (bad quoting, not UTF-8, too large) is a 400 and
 *   deletes what was stored; a file that ends well makes the job PENDING and schedules its import,
 *   all in one transaction. Nothing of a rejected file is ever visible, and the file is never in
 *   memory whole.
 * - Import: a job on the job runner imports one chunk per run, in the runner's transaction: each
 *   row under a savepoint (a failed row leaves nothing behind), the chunk deleted and the job's
 *   counters moved in the same commit, then the next run scheduled. A process killed mid-way
 *   resumes at the first chunk not yet deleted, so each row's customer is created exactly once; the
 *   runs are short (CHUNK_ROWS rows) and paused between (CHUNK_PAUSE_MS), so other requests and
 *   jobs interleave with a long import.
 * - Rows become POST /customers requests (same validation, sandbox suffixes, events); a row that
 *   fails is a per-row error with its line, never a failed job. The job is COMPLETED when every
 *   row was handled, FAILED when none of them succeeded; BULK_UPLOAD.COMPLETED/FAILED follow.
 */
import type { Readable } from 'node:stream';
import type { ValidateFunction } from 'ajv';
import { sql, type Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors, type FieldError } from '../../http/errors.ts';
import { bodyValidator, fieldErrorsFrom } from '../../http/validation.ts';
import { iso } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { runUnit, type Unit } from '../../unit.ts';
import type { CustomerCreate } from '../customers/customers.schemas.ts';
import { createCustomer } from '../customers/customers.service.ts';
import { BulkBusinessRowSchema, BulkIndividualRowSchema, type BulkImportJobWire } from './bulk-import.schemas.ts';
import type { BulkImportJobRow } from './bulk-import.tables.ts';
import { CsvSyntaxError, csvRecords } from './csv.ts';
import { guard } from '../../store/guard.ts';

/** The job runner's kind for importing the next chunk of a bulk import. */
export const JOB_BULK_IMPORT = 'customers.bulk-import';
/** Rows imported per job run (one transaction): a few tens of milliseconds of work. */
export const CHUNK_ROWS = 20;
/**
 * The pause before the next chunk's run. Not zero on purpose: the job runner runs work that is due
 * back to back, and SQLite has one connection, so an import whose next chunk is always due would
 * hold it between chunks too and every other request would queue behind the whole import. With a
 * pause the runner goes idle for a poll interval after each chunk, and what waited runs.
 */
const CHUNK_PAUSE_MS = 5;
/** Chunks written per transaction while the upload streams in. */
const CHUNKS_PER_WRITE = 40;
/** Errors a job shows (and sends in its webhook): the first ones, in file order. */
export const MAX_ERRORS_SHOWN = 1000;
/** An upload left UPLOADING this long (its process died) is deleted by the platform's next upload. */
const ABANDONED_UPLOAD_MS = 3600_000;

/** The documented columns; the first group must be in every file's header. */
const REQUIRED_COLUMNS = ['umaAddress', 'platformCustomerId', 'customerType', 'addressLine1', 'city', 'state', 'postalCode', 'country'];
const OPTIONAL_COLUMNS = [
  'fullName',
  'birthDate',
  'businessLegalName',
  'addressLine2',
  'platformAccountId',
  'description',
  'email',
  'businessRegistrationNumber',
  'businessTaxId',
];
const KNOWN_COLUMNS = new Set([...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS]);

/** Where a field of the customer request comes from in the CSV, for per-row error messages. */
const COLUMN_OF: Record<string, string> = {
  'address.line1': 'addressLine1',
  'address.line2': 'addressLine2',
  'address.city': 'city',
  'address.state': 'state',
  'address.postalCode': 'postalCode',
  'address.country': 'country',
  'businessInfo.legalName': 'businessLegalName',
  'businessInfo.registrationNumber': 'businessRegistrationNumber',
  'businessInfo.taxId': 'businessTaxId',
  'businessInfo.country': 'country',
};

const bulkErrors = {
  notCsv: (message: string) => errors.invalidInput(`The file is not a CSV Corridor can import: ${message}`, [{ field: 'file', message }]),
  jobNotFound: (id: string) => errors.coded(404, 'BULK_UPLOAD_JOB_NOT_FOUND', `Bulk upload job ${id} not found`),
};

/** Checks the header row; returns the column names in file order. */
function checkHeader(fields: string[]): string[] {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  for (const name of fields) {
    if (!KNOWN_COLUMNS.has(name)) problems.push({ field: `file.${name || '(empty)'}`, message: 'is not a known column' });
    else if (seen.has(name)) problems.push({ field: `file.${name}`, message: 'appears twice' });
    seen.add(name);
  }
  for (const name of REQUIRED_COLUMNS) if (!seen.has(name)) problems.push({ field: `file.${name}`, message: 'is a required column' });
  if (problems.length > 0) {
    throw errors.invalidInput(`The CSV header is not the documented one: ${problems[0]!.field.slice(5)} ${problems[0]!.message}`, problems);
  }
  return fields;
}

/**
 * Reads the uploaded CSV into a new job and schedules its import; returns the job as accepted.
 * `file` is the multipart file stream; a size limit on it surfaces as an error from the stream.
 */
export async function acceptUpload(
  ctx: AppContext,
  platform: PlatformRow,
  file: Readable,
  maxBytes: number,
): Promise<{ jobId: string; status: 'PENDING' }> {
  const jobId = ctx.deps.ids.next('Job');
  let header: string[] | undefined;
  let total = 0;
  let seq = 0;
  let pending: [number, string[]][] = [];
  let stored = false;

  const flush = async (final: boolean) => {
    const chunks: [number, string[]][][] = [];
    while (pending.length >= CHUNK_ROWS || (final && pending.length > 0)) chunks.push(pending.splice(0, CHUNK_ROWS));
    if (chunks.length === 0) return;
    await runUnit(ctx, platform, async (u) => {
      if (!stored) {
        await deleteAbandonedUploads(u.trx, platform.id, u.nowMs);
        await u.trx
          .insertInto('bulk_import_jobs')
          .values({
            id: jobId,
            platform_id: platform.id,
            status: 'UPLOADING',
            header: JSON.stringify(header),
            total: 0,
            processed: 0,
            successful: 0,
            failed: 0,
            created_at: u.at,
            updated_at: u.at,
            completed_at: null,
          })
          .execute();
      }
      await u.trx
        .insertInto('bulk_import_chunks')
        .values(chunks.map((rows) => ({ job_id: jobId, seq: seq++, platform_id: platform.id, rows: JSON.stringify(rows) })))
        .execute();
    });
    stored = true;
  };

  // The multipart parser stops a file at the size limit and says so with 'limit': end the read there.
  file.once('limit', () => file.destroy(Object.assign(new Error(`larger than ${maxBytes} bytes`), { code: 'FST_REQ_FILE_TOO_LARGE' })));
  try {
    for await (const record of csvRecords(formBytes(file))) {
      if (!header) {
        header = checkHeader(record.fields);
        continue;
      }
      // A blank line is no row.
      if (record.fields.length === 1 && record.fields[0] === '') continue;
      pending.push([record.line, record.fields]);
      total++;
      if (pending.length >= CHUNK_ROWS * CHUNKS_PER_WRITE) await flush(false);
    }
    if (!header) throw bulkErrors.notCsv('it is empty (a header row and at least one row are needed)');
    if (total === 0) throw bulkErrors.notCsv('it has a header but no rows');
    await flush(true);
    return await runUnit(ctx, platform, async (u) => {
      await u.trx.updateTable('bulk_import_jobs').set({ status: 'PENDING', total, updated_at: u.at }).where('id', '=', jobId).execute();
      await u.schedule(JOB_BULK_IMPORT, { jobId }, 0);
      return { jobId, status: 'PENDING' as const };
    });
  } catch (err) {
    if (stored) await runUnit(ctx, platform, (u) => deleteJob(u.trx, platform.id, jobId));
    if (err instanceof ApiError) throw err;
    if (err instanceof CsvSyntaxError) throw bulkErrors.notCsv(err.message);
    if (err instanceof MalformedForm) throw errors.invalidInput('Malformed multipart/form-data body');
    if (isFileTooLarge(err)) throw bulkErrors.notCsv(`it is larger than ${maxBytes} bytes`);
    throw err;
  } finally {
    pending = [];
  }
}

/** The multipart parser could not read the form (a truncated body, a broken part). */
class MalformedForm extends Error {}

/** The file part's bytes; a parser error becomes MalformedForm (the request's fault, not the server's). */
async function* formBytes(file: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of file) yield chunk as Buffer;
  } catch (err) {
    throw isFileTooLarge(err) ? err : new MalformedForm(String(err), { cause: err });
  }
}

function isFileTooLarge(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'FST_REQ_FILE_TOO_LARGE';
}

async function deleteJob(trx: Kysely<Database>, platformId: string, jobId: string): Promise<void> {
  await trx.deleteFrom('bulk_import_chunks').where('platform_id', '=', platformId).where('job_id', '=', jobId).execute();
  await trx.deleteFrom('bulk_import_errors').where('platform_id', '=', platformId).where('job_id', '=', jobId).execute();
  await trx.deleteFrom('bulk_import_jobs').where('id', '=', jobId).where(guard('platform_id', platformId)).execute();
}

async function deleteAbandonedUploads(trx: Kysely<Database>, platformId: string, nowMs: number): Promise<void> {
  const stale = await trx
    .selectFrom('bulk_import_jobs')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('status', '=', 'UPLOADING')
    .where('created_at', '<', iso(nowMs - ABANDONED_UPLOAD_MS))
    .execute();
  for (const { id } of stale) await deleteJob(trx, platformId, id);
}

/** The job as GET returns it: 404 for another platform's, or one still uploading. */
export async function getJob(ctx: AppContext, platform: PlatformRow, jobId: string): Promise<BulkImportJobWire> {
  const job = await ctx.db
    .selectFrom('bulk_import_jobs')
    .selectAll()
    .where('id', '=', jobId)
    .where(guard('platform_id', platform.id))
    .executeTakeFirst();
  if (!job || job.status === 'UPLOADING') throw bulkErrors.jobNotFound(jobId);
  return jobToWire(ctx.db, job);
}

async function jobToWire(db: Kysely<Database>, job: BulkImportJobRow): Promise<BulkImportJobWire> {
  const w: BulkImportJobWire = {
    id: job.id,
    status: job.status as BulkImportJobWire['status'],
    progress: { total: job.total, processed: job.processed, successful: job.successful, failed: job.failed },
  };
  if (job.failed > 0) {
    const rows = await db
      .selectFrom('bulk_import_errors')
      .selectAll()
      .where('platform_id', '=', job.platform_id)
      .where('job_id', '=', job.id)
      .orderBy('row')
      .limit(MAX_ERRORS_SHOWN)
      .execute();
    w.errors = rows.map((e) => ({
      correlationId: e.correlation_id,
      code: e.code,
      message: e.message,
      ...(e.details ? { details: JSON.parse(e.details) as Record<string, unknown> } : {}),
    }));
  } else {
    w.errors = [];
  }
  if (job.completed_at) w.completedAt = job.completed_at;
  return w;
}

/** Job handler: imports the next chunk of the bulk import, or finishes it. */
export async function bulkImportJob(u: Unit, job: { payload: string }): Promise<void> {
  const { jobId } = JSON.parse(job.payload) as { jobId: string };
  const row = await u.trx
    .selectFrom('bulk_import_jobs')
    .selectAll()
    .where('id', '=', jobId)
    .where(guard('platform_id', u.platform.id))
    .executeTakeFirst();
  // Gone (a sandbox reset) or finished: nothing to do.
  if (!row || (row.status !== 'PENDING' && row.status !== 'PROCESSING')) return;
  const chunk = await u.trx
    .selectFrom('bulk_import_chunks')
    .selectAll()
    .where('platform_id', '=', u.platform.id)
    .where('job_id', '=', jobId)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  if (!chunk) return finish(u, row);
  const header = JSON.parse(row.header) as string[];
  let successful = 0;
  let failed = 0;
  for (const [line, fields] of JSON.parse(chunk.rows) as [number, string[]][]) {
    const outcome = await importRow(u, header, fields, line);
    if (outcome === 'created') successful++;
    else {
      failed++;
      await u.trx
        .insertInto('bulk_import_errors')
        .values({
          job_id: jobId,
          row: line,
          platform_id: u.platform.id,
          correlation_id: outcome.correlationId,
          code: outcome.code,
          message: outcome.message,
          details: JSON.stringify(outcome.details),
        })
        .execute();
    }
  }
  await u.trx.deleteFrom('bulk_import_chunks').where('job_id', '=', jobId).where('seq', '=', chunk.seq).execute();
  const moved = {
    ...row,
    status: 'PROCESSING',
    processed: row.processed + successful + failed,
    successful: row.successful + successful,
    failed: row.failed + failed,
    updated_at: u.at,
  };
  const { status, processed, updated_at } = moved;
  await u.trx
    .updateTable('bulk_import_jobs')
    .set({ status, processed, successful: moved.successful, failed: moved.failed, updated_at })
    .where('id', '=', jobId)
    .execute();
  // The last chunk finishes the job in the same run; otherwise the next run comes after a pause.
  if (processed >= row.total) return finish(u, moved);
  await u.schedule(JOB_BULK_IMPORT, { jobId }, CHUNK_PAUSE_MS);
}

/** Every row handled: COMPLETED (FAILED when none was imported), with its webhook. */
async function finish(u: Unit, row: BulkImportJobRow): Promise<void> {
  const status = row.successful === 0 && row.failed > 0 ? 'FAILED' : 'COMPLETED';
  const done = { ...row, status, completed_at: u.at, updated_at: u.at };
  await u.trx.updateTable('bulk_import_jobs').set({ status, completed_at: u.at, updated_at: u.at }).where('id', '=', row.id).execute();
  u.emit(status === 'FAILED' ? 'BULK_UPLOAD.FAILED' : 'BULK_UPLOAD.COMPLETED', row.id, await jobToWire(u.trx, done));
}

interface RowError {
  correlationId: string;
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** The row validators, compiled on the first import (not at load: the build compiles route validators first). */
let rowValidators: { individual: ValidateFunction; business: ValidateFunction } | undefined;
function validators() {
  rowValidators ??= { individual: bodyValidator(BulkIndividualRowSchema), business: bodyValidator(BulkBusinessRowSchema) };
  return rowValidators;
}

/** Imports one CSV row as a customer, under a savepoint: a failed row leaves nothing behind. */
async function importRow(u: Unit, header: string[], fields: string[], line: number): Promise<'created' | RowError> {
  const value = (name: string): string | undefined => {
    const i = header.indexOf(name);
    const v = i >= 0 ? fields[i]?.trim() : undefined;
    return v === undefined || v === '' ? undefined : v;
  };
  const platformCustomerId = value('platformCustomerId');
  const fail = (code: string, message: string, extra: Record<string, unknown> = {}): RowError => ({
    correlationId: platformCustomerId ?? `row_${line}`,
    code,
    message,
    details: { row: line, ...extra },
  });
  if (fields.length !== header.length) {
    return fail('INVALID_INPUT', `The row has ${fields.length} fields; the header has ${header.length} columns`);
  }
  const body = rowToRequest(value);
  if (!body)
    return fail('INVALID_INPUT', 'customerType must be INDIVIDUAL or BUSINESS', {
      errors: [{ field: 'customerType', message: 'must be INDIVIDUAL or BUSINESS' }],
    });
  const check = body.customerType === 'INDIVIDUAL' ? validators().individual : validators().business;
  if (!check(body)) {
    const fieldErrors = fieldErrorsFrom(check.errors ?? []).map((e) => ({ ...e, field: columnOf(e.field) }));
    return fail('INVALID_INPUT', `${fieldErrors[0]?.field ?? 'row'} ${fieldErrors[0]?.message ?? 'is invalid'}`, { errors: fieldErrors });
  }
  await sql`savepoint bulk_row`.execute(u.trx);
  try {
    await createCustomer(u, body as CustomerCreate);
    await sql`release savepoint bulk_row`.execute(u.trx);
    return 'created';
  } catch (err) {
    await sql`rollback to savepoint bulk_row`.execute(u.trx);
    await sql`release savepoint bulk_row`.execute(u.trx);
    if (!(err instanceof ApiError)) throw err;
    const fieldErrors = (err.details?.errors as FieldError[] | undefined)?.map((e) => ({ ...e, field: columnOf(e.field) }));
    return fail(err.code, err.message, fieldErrors ? { errors: fieldErrors } : {});
  }
}

/** The CSV column a request field came from (the request's own name when it is a column too). */
function columnOf(field: string): string {
  return COLUMN_OF[field] ?? field;
}

/** The customer create request a row stands for; undefined for an unknown customerType. */
function rowToRequest(value: (name: string) => string | undefined): Record<string, unknown> | undefined {
  const type = value('customerType');
  const uma = value('umaAddress');
  const address = {
    line1: value('addressLine1'),
    line2: value('addressLine2'),
    city: value('city'),
    state: value('state'),
    postalCode: value('postalCode'),
    country: value('country'),
  };
  const common = {
    platformCustomerId: value('platformCustomerId'),
    // The documented examples leave out the leading `$`.
    umaAddress: uma === undefined || uma.startsWith('$') ? uma : `$${uma}`,
    address: dropUndefined(address),
  };
  if (type === 'INDIVIDUAL') {
    return dropUndefined({
      customerType: type,
      ...common,
      fullName: value('fullName'),
      birthDate: value('birthDate'),
      email: value('email'),
    });
  }
  if (type === 'BUSINESS') {
    const businessInfo = dropUndefined({
      legalName: value('businessLegalName'),
      country: value('country'),
      registrationNumber: value('businessRegistrationNumber'),
      taxId: value('businessTaxId'),
    });
    return dropUndefined({ customerType: type, ...common, businessInfo });
  }
  return undefined;
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
