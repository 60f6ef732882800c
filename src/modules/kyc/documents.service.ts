/**
 * KYC/KYB documents. A document belongs to a Customer or a BeneficialOwner of the platform; its
 * file must be a PDF, JPEG or PNG — decided by the file's magic bytes, not by the declared type or
 * the file name — of at most 10 MiB. The bytes are kept in the database (document_files), so every
 * process on one PostgreSQL sees them. A document used by a verification that moved past
 * RESOLVE_ERRORS counts as submitted and can no longer be deleted (409); replacing it is allowed
 * (that is how a rejected document is re-uploaded) and makes it unsubmitted again.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { errors, type FieldError } from '../../http/errors.ts';
import type { Database, DocumentRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { requireCustomer } from '../customers/customers.service.ts';
import { requireBeneficialOwner } from './beneficial-owners.service.ts';
import { deleteDocument, findDocument, insertDocument, replaceDocument } from './documents.repo.ts';
import {
  MAX_DOCUMENT_BYTES,
  type DocumentReplace,
  type DocumentType,
  type DocumentUpload,
  type DocumentWire,
} from './documents.schemas.ts';

/** A file taken from a multipart form. */
export interface UploadedFile {
  /** The name the client gave (may be empty). */
  filename: string;
  /** The Content-Type the client declared for the part (informational only). */
  mimetype: string;
  bytes: Buffer;
}

export type SniffedType = 'application/pdf' | 'image/jpeg' | 'image/png';

/** The file's real type from its first bytes, or undefined when it is none of PDF, JPEG, PNG. */
export function sniffType(bytes: Buffer): SniffedType | undefined {
  if (bytes.length >= 5 && bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  return undefined;
}

const EXTENSION: Record<SniffedType, string> = { 'application/pdf': 'pdf', 'image/jpeg': 'jpg', 'image/png': 'png' };
const MAX_FILE_NAME = 255;

/** Checks the file; returns its type and the name to store. */
export function checkFile(file: UploadedFile | undefined): { type: SniffedType; fileName: string } {
  if (!file) throw errors.invalidField('file', 'is required: send the document as a file part named file');
  const problems: FieldError[] = [];
  if (file.bytes.length === 0) problems.push({ field: 'file', message: 'is empty' });
  if (file.bytes.length > MAX_DOCUMENT_BYTES)
    problems.push({ field: 'file', message: `must be at most ${MAX_DOCUMENT_BYTES} bytes (10 MiB)` });
  const type = file.bytes.length > 0 ? sniffType(file.bytes) : undefined;
  if (file.bytes.length > 0 && !type) {
    problems.push({
      field: 'file',
      message: 'must be a PDF, JPEG or PNG file (its content is none of these)',
      constraint: { enum: ['application/pdf', 'image/jpeg', 'image/png'] },
    });
  }
  // Browsers may send a full client path ("C:\fakepath\scan.pdf"): keep the last segment only.
  const base = file.filename.split(/[\\/]/).pop() ?? '';
  if (base.length > MAX_FILE_NAME) problems.push({ field: 'file', message: `file name must be at most ${MAX_FILE_NAME} characters` });
  if (problems.length > 0 || !type) throw errors.invalidInput(`Invalid document file: ${problems[0]!.message}`, problems);
  return { type, fileName: base === '' ? `document.${EXTENSION[type]}` : base };
}

export function documentToWire(row: DocumentRow): DocumentWire {
  const w: DocumentWire = {
    id: row.id,
    documentHolder: row.document_holder,
    documentType: row.document_type as DocumentType,
    country: row.country,
    fileName: row.file_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.side !== null) w.side = row.side as 'FRONT' | 'BACK';
  if (row.document_number !== null) w.documentNumber = row.document_number;
  if (row.issuing_authority !== null) w.issuingAuthority = row.issuing_authority;
  return w;
}

/**
 * The customer a holder id stands for: a live Customer, or the live customer of a BeneficialOwner.
 * The customer's row stays locked until the unit ends (its documents change one write at a time).
 */
async function holderCustomerId(u: Unit, holder: string): Promise<string> {
  if (holder.startsWith('BeneficialOwner:')) {
    const owner = await requireBeneficialOwner(u.trx, u.platform.id, holder);
    await requireCustomer(u.trx, u.platform.id, owner.customer_id, { forUpdate: true });
    return owner.customer_id;
  }
  if (holder.startsWith('Customer:')) return (await requireCustomer(u.trx, u.platform.id, holder, { forUpdate: true })).id;
  // The schema only lets these two prefixes through; kept for callers that skip it.
  throw errors.invalidField('documentHolder', 'must be a Customer id or a BeneficialOwner id');
}

/** What an upload or a replacement sets: the metadata (fields left out are cleared) and the new file, not yet submitted. */
function contentFields(form: DocumentReplace, fileName: string, type: string, bytes: Buffer) {
  return {
    document_type: form.documentType,
    side: form.side ?? null,
    country: form.country,
    document_number: form.documentNumber ?? null,
    issuing_authority: form.issuingAuthority ?? null,
    file_name: fileName,
    content_type: type,
    size_bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    submitted_at: null,
  } satisfies Partial<DocumentRow>;
}

/** POST /documents: a new document of a customer or beneficial owner (the file is checked first). */
export async function uploadDocument(u: Unit, form: DocumentUpload, file: UploadedFile | undefined): Promise<DocumentWire> {
  const { type, fileName } = checkFile(file);
  const bytes = file!.bytes;
  const customerId = await holderCustomerId(u, form.documentHolder);
  const at = u.at;
  const row: DocumentRow = {
    id: u.deps.ids.next('Document'),
    platform_id: u.platform.id,
    document_holder: form.documentHolder,
    customer_id: customerId,
    ...contentFields(form, fileName, type, bytes),
    created_at: at,
    updated_at: at,
  };
  await insertDocument(u.trx, row, bytes);
  return documentToWire(row);
}

/** A document of this platform, or 404 REFERENCE_NOT_FOUND. */
export async function requireDocument(db: Kysely<Database>, platformId: string, id: string): Promise<DocumentRow> {
  const row = await findDocument(db, platformId, id);
  if (!row) throw errors.notFound('Document', id);
  return row;
}

/** PUT: a new file and new metadata (fields left out are cleared); the holder stays. */
export async function replaceDocumentById(
  u: Unit,
  id: string,
  form: DocumentReplace,
  file: UploadedFile | undefined,
): Promise<DocumentWire> {
  const { trx, platform, at } = u;
  const current = await requireDocument(trx, platform.id, id);
  // 404 for an unknown id before complaining about the file.
  const { type, fileName } = checkFile(file);
  const bytes = file!.bytes;
  await holderCustomerId(u, current.document_holder);
  const next: DocumentRow = { ...current, ...contentFields(form, fileName, type, bytes), updated_at: at };
  const { id: _id, platform_id: _p, created_at: _c, document_holder: _h, customer_id: _cu, ...set } = next;
  await replaceDocument(trx, platform.id, id, set, bytes);
  return documentToWire(next);
}

/** DELETE: a document not yet submitted for verification (409 once it was). */
export async function deleteDocumentById(u: Unit, id: string): Promise<void> {
  const { trx, platform } = u;
  const found = await requireDocument(trx, platform.id, id);
  // Under the customer's lock a concurrent verification cannot mark it submitted meanwhile (a
  // deleted customer's documents may still be deleted: the lock is all this needs).
  await findCustomer(trx, platform.id, found.customer_id, { forUpdate: true });
  const row = await requireDocument(trx, platform.id, id);
  if (row.submitted_at !== null) {
    throw errors.conflict(`Document ${id} was submitted for verification and can no longer be deleted; replace it with PUT instead`);
  }
  await deleteDocument(trx, platform.id, id);
}
