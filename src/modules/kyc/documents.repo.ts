/** SQL for documents and their bytes. Every query filters on platform_id. */
import type { Kysely, Updateable } from 'kysely';
import type { Database, DocumentRow, DocumentsTable } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

export async function insertDocument(db: Kysely<Database>, row: DocumentRow, bytes: Buffer): Promise<void> {
  await db.insertInto('documents').values(row).execute();
  await db
    .insertInto('document_files')
    .values({ document_id: row.id, platform_id: row.platform_id, content_base64: bytes.toString('base64') })
    .execute();
}

export async function findDocument(db: Kysely<Database>, platformId: string, id: string): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}

/** The stored bytes of a document. */
export async function readDocumentBytes(db: Kysely<Database>, platformId: string, id: string): Promise<Buffer | undefined> {
  const r = await db
    .selectFrom('document_files')
    .select('content_base64')
    .where('platform_id', '=', platformId)
    .where('document_id', '=', id)
    .executeTakeFirst();
  return r ? Buffer.from(r.content_base64, 'base64') : undefined;
}

/** Replaces a document's metadata and bytes. */
export async function replaceDocument(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  set: Updateable<DocumentsTable>,
  bytes: Buffer,
): Promise<void> {
  await db.updateTable('documents').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
  await db
    .updateTable('document_files')
    .set({ content_base64: bytes.toString('base64') })
    .where('platform_id', '=', platformId)
    .where('document_id', '=', id)
    .execute();
}

export async function deleteDocument(db: Kysely<Database>, platformId: string, id: string): Promise<void> {
  await db.deleteFrom('document_files').where('platform_id', '=', platformId).where('document_id', '=', id).execute();
  await db.deleteFrom('documents').where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

/** Every document of a customer and of its beneficial owners, oldest first. */
export async function documentsOfCustomer(db: Kysely<Database>, platformId: string, customerId: string): Promise<DocumentRow[]> {
  return db
    .selectFrom('documents')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .orderBy('id', 'asc')
    .execute();
}

/** Marks documents as submitted for verification (they can no longer be deleted). */
export async function markSubmitted(db: Kysely<Database>, platformId: string, ids: string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('documents')
    .set({ submitted_at: at })
    .where('platform_id', '=', platformId)
    .where('id', 'in', ids)
    .where('submitted_at', 'is', null)
    .execute();
}

/** One page of documents, newest first, plus the total that match. */
export async function listDocuments(
  db: Kysely<Database>,
  platformId: string,
  f: { documentHolder?: string | undefined },
  limit: number,
  afterId: string | undefined,
) {
  let q = db.selectFrom('documents').where('platform_id', '=', platformId);
  if (f.documentHolder !== undefined) q = q.where('document_holder', '=', f.documentHolder);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}
