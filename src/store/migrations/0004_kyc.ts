/**
 * KYC/KYB: beneficial owners, documents (metadata + bytes) and verifications.
 *
 * Document bytes are stored base64-encoded in a text column of their own table: the same column
 * type works on SQLite and PostgreSQL (no dialect branch in the migration, no driver-specific
 * Buffer handling), every process sharing one PostgreSQL sees them, and metadata queries never
 * touch the (up to ~14 MB of text per file) payload. The price is a third more space than a
 * bytea/blob column, acceptable for a sandbox whose files are capped at 10 MiB.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0004Kyc: Migration = {
  name: '0004_kyc',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('beneficial_owners')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id'))
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('ownership_percentage', 'integer', (c) => c.notNull())
      .addColumn('personal_info', 'text', (c) => c.notNull())
      .addColumn('kyc_status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('beneficial_owners_customer')
      .on('beneficial_owners')
      .columns(['platform_id', 'customer_id', 'id'])
      .execute();

    await db.schema
      .createTable('documents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('document_holder', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id'))
      .addColumn('document_type', 'text', (c) => c.notNull())
      .addColumn('side', 'text')
      .addColumn('country', 'text', (c) => c.notNull())
      .addColumn('document_number', 'text')
      .addColumn('issuing_authority', 'text')
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'integer', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('submitted_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('documents_holder').on('documents').columns(['platform_id', 'document_holder', 'id']).execute();
    await db.schema.createIndex('documents_customer').on('documents').columns(['platform_id', 'customer_id', 'id']).execute();

    await db.schema
      .createTable('document_files')
      .addColumn('document_id', 'text', (c) => c.primaryKey().references('documents.id').onDelete('cascade'))
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('content_base64', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('verifications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id'))
      .addColumn('verification_status', 'text', (c) => c.notNull())
      .addColumn('errors', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('verifications_customer').on('verifications').columns(['platform_id', 'customer_id', 'id']).execute();
    await db.schema.createIndex('verifications_status').on('verifications').columns(['platform_id', 'verification_status', 'id']).execute();
  },
};
