/**
 * A valid request for any operation of the served document, over real HTTP: its path filled with a
 * world's ids, its baseline body (JSON, or a multipart form with a PDF for the document operations),
 * a fresh Idempotency-Key when it takes one, and the caller's credentials. For the suites that go
 * over every operation (the permission matrix, retry on conflict).
 */
import { Client, type Creds, type Res } from '../http.ts';
import { PDF, sendForm } from '../kyc.ts';
import { uniqueId } from '../random.ts';
import { baselineBody, documentFields, pathValues } from './baselines.ts';
import { fillPath, type Operation } from './operations.ts';
import { bulkCsvFile, type World } from './world.ts';

export interface Caller {
  basic?: Creds;
  bearer?: string;
}

export interface RequestOptions {
  /** The body to send instead of the baseline (JSON operations). */
  body?: unknown;
  /** Appended to the path as is (e.g. `?x=1`). */
  query?: string;
  headers?: Record<string, string>;
}

/** The operation's baseline body for world `w` (undefined when it takes none). */
export function validBody(op: Operation, w: World): unknown {
  return baselineBody(op, w)?.body;
}

/** The query string of the operation's required query parameters (the SCA operations' `customerId`), filled from the world. */
export function requiredQuery(op: Operation, w: World): string {
  const qs = new URLSearchParams();
  for (const q of op.query) if (q.required && q.name === 'customerId') qs.set(q.name, w.ids.customer);
  const s = qs.toString();
  return s ? `?${s}` : '';
}

/** Sends `op` as `caller` against the server at `origin` (document paths carry the API version). */
export async function sendOperation(origin: string, op: Operation, w: World, caller: Caller, o: RequestOptions = {}): Promise<Res> {
  const path = fillPath(op, pathValues(op, w)) + (o.query ?? requiredQuery(op, w));
  const headers: Record<string, string> = { ...o.headers };
  if (op.headers.some((h) => h.name.toLowerCase() === 'idempotency-key')) headers['idempotency-key'] ??= uniqueId('key');
  if (op.body?.contentType === 'multipart/form-data' && o.body === undefined) {
    const file = op.operationId === 'uploadCustomersCsv' ? bulkCsvFile(w.inviterUma) : { bytes: PDF };
    return sendForm(origin, op.method as 'POST' | 'PUT', path, documentFields(op, w), file, caller.basic);
  }
  const body = o.body !== undefined ? o.body : validBody(op, w);
  return new Client(origin, caller).request(op.method, path, body, { headers });
}
