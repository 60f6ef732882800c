/**
 * Bulk customer import: POST /customers/bulk/csv (multipart, the CSV in `file`; 202 with the job),
 * GET /customers/bulk/jobs/{jobId}. See bulk-import.service.ts for how a file becomes customers.
 * @fastify/multipart is registered inside this plugin only; the file is streamed, never buffered.
 */
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { discardRest } from '../../http/multipart.ts';
import { errorResponses } from '../../http/schemas.ts';
import { BulkImportAcceptedSchema, BulkImportJobParams, BulkImportJobSchema, BulkImportUploadSchema } from './bulk-import.schemas.ts';
import { acceptUpload, getJob } from './bulk-import.service.ts';

const TAG = 'Customers';

export function bulkImportRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const maxBytes = ctx.config.bulkCsvMaxBytes;
  return async (app) => {
    await app.register(multipart, {
      limits: { fileSize: maxBytes, files: 1, fields: 0, parts: 1, fieldNameSize: 100, headerPairs: 100 },
      throwFileSizeLimit: true,
    });

    /** The request's file part, taken in preValidation (its stream is read by the handler). */
    const files = new WeakMap<FastifyRequest, MultipartFile>();
    const takeFile = async (req: FastifyRequest): Promise<void> => {
      if (!req.isMultipart()) throw errors.invalidInput('Send the CSV as multipart/form-data, in a file part named `file`');
      let part: MultipartFile | undefined;
      try {
        part = await req.file();
      } catch (err) {
        discardRest(req.raw);
        // Whatever the parser could not read is the request's fault.
        const known = formError(err);
        throw known instanceof ApiError ? known : errors.invalidInput('Malformed multipart/form-data body');
      }
      if (!part) throw errors.invalidField('file', 'is required: the CSV as a file part named `file`');
      if (part.fieldname !== 'file') {
        part.file.resume();
        throw errors.invalidField(part.fieldname, 'is not a known field: send the CSV in a file part named `file`');
      }
      files.set(req, part);
      req.body = {};
    };

    app.post(
      '/customers/bulk/csv',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        preValidation: takeFile,
        schema: {
          operationId: 'uploadCustomersCsv',
          tags: [TAG],
          summary: 'Import customers from a CSV file',
          description:
            'The CSV (UTF-8, a header row with the documented column names, then one customer per row) is read as it ' +
            'arrives and imported in the background; follow the job with GET /customers/bulk/jobs/{jobId} or the ' +
            'BULK_UPLOAD.* webhooks. A file whose header, encoding or quoting is wrong, or that is too large, is a 400 and ' +
            'leaves nothing behind; a row that cannot become a customer is a per-row error in the job.',
          consumes: ['multipart/form-data'],
          body: BulkImportUploadSchema,
          response: { 202: BulkImportAcceptedSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const part = files.get(req)!;
        try {
          const accepted = await acceptUpload(ctx, platformOf(req).platform, part.file, maxBytes);
          return reply.code(202).send(accepted);
        } catch (err) {
          discardRest(req.raw);
          throw formError(err);
        }
      },
    );

    app.get(
      '/customers/bulk/jobs/:jobId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getBulkCustomerImportJob',
          tags: [TAG],
          summary: 'Get a bulk customer import job',
          params: BulkImportJobParams,
          response: { 200: BulkImportJobSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getJob(ctx, platformOf(req).platform, req.params.jobId),
    );
  };
}

/** A problem with the form itself: a 400 saying what. */
function formError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  switch ((err as { code?: unknown } | null)?.code) {
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return errors.invalidInput('Send only the CSV, as one file part named `file`');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return errors.invalidInput('Send the CSV as multipart/form-data, in a file part named `file`');
    case undefined:
      return err;
    default:
      return String((err as { code?: unknown }).code).startsWith('FST_') ? errors.invalidInput('Malformed multipart/form-data body') : err;
  }
}
