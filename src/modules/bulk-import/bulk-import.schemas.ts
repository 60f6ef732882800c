/** Wire shapes of the bulk customer import (the live BulkCustomerImportJob and friends). */
import { type Static, Type } from '@sinclair/typebox';
import { DateTime, Obj } from '../../http/schemas.ts';
import { AddressSchema, IndividualCustomerCreateSchema } from '../customers/customers.schemas.ts';

export const BulkImportJobStatus = Type.Union(
  [Type.Literal('PENDING'), Type.Literal('PROCESSING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')],
  { description: 'PENDING until the first rows are imported; COMPLETED or FAILED (every row failed) when all are done' },
);

export const BulkImportAcceptedSchema = Obj(
  {
    jobId: Type.String({ examples: ['Job:019542f5-b3e7-1d02-0000-000000000006'] }),
    status: Type.Union([Type.Literal('PENDING'), Type.Literal('PROCESSING')]),
  },
  { title: 'BulkCustomerImportJobAccepted' },
);

export const BulkImportErrorEntrySchema = Obj(
  {
    correlationId: Type.String({ description: "The row's platformCustomerId, or row_<line> when it has none" }),
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'row: the line in the file; errors: field problems' }),
    ),
  },
  { title: 'BulkCustomerImportErrorEntry' },
);

export const BulkImportJobSchema = Obj(
  {
    id: Type.String({ examples: ['Job:019542f5-b3e7-1d02-0000-000000000006'] }),
    status: BulkImportJobStatus,
    progress: Obj(
      {
        total: Type.Integer({ minimum: 0, description: 'Rows in the file' }),
        processed: Type.Integer({ minimum: 0 }),
        successful: Type.Integer({ minimum: 0, description: 'Customers created' }),
        failed: Type.Integer({ minimum: 0 }),
      },
      { title: 'BulkCustomerImportProgress' },
    ),
    errors: Type.Optional(
      Type.Array(BulkImportErrorEntrySchema, { description: 'The failed rows in file order (the first 1,000)', maxItems: 1000 }),
    ),
    completedAt: Type.Optional(DateTime),
  },
  { title: 'BulkCustomerImportJob' },
);
export type BulkImportJobWire = Static<typeof BulkImportJobSchema>;

export const BulkImportJobParams = Obj({ jobId: Type.String({ minLength: 1, maxLength: 200 }) });

/** The multipart form: the CSV in `file` (no other fields). */
export const BulkImportUploadSchema = Obj(
  { file: Type.Optional(Type.String({ format: 'binary', description: 'The CSV (UTF-8, header row first)' })) },
  { title: 'BulkCustomerImportUpload' },
);

/** A CSV row of an individual, as the customer create request it becomes. */
export const BulkIndividualRowSchema = IndividualCustomerCreateSchema;

/**
 * A CSV row of a business: the CSV has no incorporation date and an optional tax id, so the row's
 * businessInfo needs only its legal name (the rest can be added with PATCH /customers/{id}).
 */
export const BulkBusinessRowSchema = Obj(
  {
    customerType: Type.Literal('BUSINESS'),
    platformCustomerId: Type.String({ minLength: 1, maxLength: 255 }),
    umaAddress: Type.String({ minLength: 1, maxLength: 320 }),
    address: AddressSchema,
    businessInfo: Obj({
      legalName: Type.String({ minLength: 1, maxLength: 255 }),
      country: Type.String({ pattern: '^[A-Z]{2}$' }),
      registrationNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      taxId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    }),
  },
  { title: 'BulkBusinessRow' },
);
