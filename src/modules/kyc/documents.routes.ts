/**
 * Documents: POST/GET /documents, GET/PUT/DELETE /documents/{documentId}.
 *
 * POST and PUT take multipart/form-data. @fastify/multipart is registered inside this plugin only
 * (Fastify encapsulation), so no other route accepts multipart and JSON parsing elsewhere is
 * untouched. A route-level preValidation hook reads the form: the single file part is buffered
 * (at most 10 MiB) and kept aside, and the text fields become `req.body`, so the ordinary Ajv body
 * validation checks them against the route's TypeBox schema — which is also what the served
 * OpenAPI document shows as the multipart request body (`consumes: multipart/form-data`). Every
 * problem with the form (not multipart, too large, several files, malformed) is a JSON 400.
 */
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { ApiError, errors, type FieldError } from '../../http/errors.ts';
import { discardRest } from '../../http/multipart.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, noContent, ok, write } from '../../http/write.ts';
import { listDocuments } from './documents.repo.ts';
import {
  DocumentIdParams,
  DocumentListQuery,
  DocumentListSchema,
  DocumentReplaceSchema,
  DocumentSchema,
  DocumentUploadSchema,
  MAX_DOCUMENT_BYTES,
} from './documents.schemas.ts';
import {
  deleteDocumentById,
  documentToWire,
  replaceDocumentById,
  requireDocument,
  uploadDocument,
  type UploadedFile,
} from './documents.service.ts';

const TAG = 'Documents';
const MULTIPART = ['multipart/form-data'];

/** Form limits: one file, a handful of short text fields. */
const LIMITS = { fileSize: MAX_DOCUMENT_BYTES, files: 1, fields: 10, parts: 11, fieldSize: 1024, fieldNameSize: 100, headerPairs: 100 };

export function documentRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(multipart, { limits: LIMITS, throwFileSizeLimit: true });

    /** The file of each multipart request, beside its text fields in `req.body`. */
    const files = new WeakMap<FastifyRequest, UploadedFile>();
    const readForm = async (req: FastifyRequest): Promise<void> => {
      const form = await readMultipartForm(req);
      req.body = form.fields;
      if (form.file) files.set(req, form.file);
    };

    app.post(
      '/documents',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        preValidation: readForm,
        schema: {
          operationId: 'uploadDocument',
          tags: [TAG],
          summary: 'Upload a document (PDF, JPEG or PNG, at most 10 MiB) for a customer or a beneficial owner',
          consumes: MULTIPART,
          body: DocumentUploadSchema,
          response: { 201: DocumentSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await uploadDocument(u, req.body, files.get(req)))),
    );

    app.get(
      '/documents',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listDocuments',
          tags: [TAG],
          summary: 'List documents, optionally of one holder',
          querystring: DocumentListQuery,
          response: { 200: DocumentListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const limit = req.query.limit ?? 20;
        const { rows, totalCount } = await listDocuments(
          ctx.db,
          platform.id,
          { documentHolder: req.query.documentHolder },
          limit,
          decodeCursor(req.query.cursor),
        );
        return toPage(rows, limit, totalCount, documentToWire);
      },
    );

    app.get(
      '/documents/:documentId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getDocument',
          tags: [TAG],
          summary: "Get a document's metadata",
          params: DocumentIdParams,
          response: { 200: DocumentSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => documentToWire(await requireDocument(ctx.db, platformOf(req).platform.id, req.params.documentId)),
    );

    app.put(
      '/documents/:documentId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        preValidation: readForm,
        schema: {
          operationId: 'replaceDocument',
          tags: [TAG],
          summary: 'Replace a document: a new file and new metadata (re-upload after a rejection)',
          consumes: MULTIPART,
          params: DocumentIdParams,
          body: DocumentReplaceSchema,
          response: { 200: DocumentSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => ok(await replaceDocumentById(u, req.params.documentId, req.body, files.get(req)))),
    );

    app.delete(
      '/documents/:documentId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteDocument',
          tags: [TAG],
          summary: 'Delete a document not yet submitted for verification',
          params: DocumentIdParams,
          response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403, 404, 409) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await deleteDocumentById(u, req.params.documentId);
          return noContent;
        }),
    );
  };
}

interface Form {
  fields: Record<string, unknown>;
  file: UploadedFile | undefined;
}

/** Reads the whole multipart form; the file is buffered, the text fields kept as sent. */
async function readMultipartForm(req: FastifyRequest): Promise<Form> {
  if (!req.isMultipart()) {
    throw errors.invalidInput('Send the document as multipart/form-data: the file in the `file` field, the metadata in text fields');
  }
  const fields: Record<string, unknown> = {};
  const problems: FieldError[] = [];
  let file: UploadedFile | undefined;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          // Not ours: drain it and let the schema name the unknown field.
          await part.toBuffer();
          fields[part.fieldname] = part.filename ?? '';
          continue;
        }
        file = { filename: part.filename ?? '', mimetype: part.mimetype, bytes: await part.toBuffer() };
        fields.file = file.filename;
        continue;
      }
      const name = part.fieldname;
      if (part.fieldnameTruncated) problems.push({ field: name, message: 'field name is too long' });
      else if (part.valueTruncated) problems.push({ field: name, message: `must be at most ${LIMITS.fieldSize} bytes` });
      else if (name === 'file') problems.push({ field: 'file', message: 'must be a file part (with a filename), not a text field' });
      else if (Object.hasOwn(fields, name)) problems.push({ field: name, message: 'must be sent only once' });
      fields[name] = part.value;
    }
  } catch (err) {
    discardRest(req.raw);
    throw formError(err);
  }
  if (problems.length > 0) throw errors.invalidInput(`Invalid form: ${problems[0]!.field} ${problems[0]!.message}`, problems);
  return { fields, file };
}

/** Whatever went wrong while reading the form was the request's fault: a 400 saying what. */
function formError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  switch ((err as { code?: unknown }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return errors.invalidField('file', `must be at most ${MAX_DOCUMENT_BYTES} bytes (10 MiB)`);
    case 'FST_FILES_LIMIT':
      return errors.invalidField('file', 'only one file may be sent');
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return errors.invalidInput(`The form has too many fields (at most ${LIMITS.fields} text fields and one file)`);
    case 'FST_PROTO_VIOLATION':
      return errors.invalidInput('The form has a field name that is not allowed');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return errors.invalidInput('A form field declared as application/json is not valid JSON');
    default:
      return errors.invalidInput('Malformed multipart/form-data body');
  }
}
