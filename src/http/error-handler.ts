/**
 * The single place where failures become HTTP responses: ApiErrors keep their status and code,
 * validation and body-parsing failures become 400 `INVALID_INPUT`, an unknown path is 404, a known
 * path with the wrong method is 405, and anything unexpected is a 500 `INTERNAL_ERROR` that leaks
 * nothing but the request id (the details go to the log).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Duplex } from 'node:stream';
import FindMyWay from 'find-my-way';
import { ApiError, errors } from './errors.ts';
import { fieldErrorsFrom } from './validation.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Fastify's own 4xx errors for a body it could not accept, by code. */
const BODY_ERRORS: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Body is empty but Content-Type is application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'Body is not valid JSON',
};

/**
 * Node's HTTP parser rejects some requests before Fastify routes them (malformed request line or
 * headers, headers over the size limit, bad Content-Length, request timeout). Fastify's default
 * answer is its own JSON shape; this one writes the spec's error body instead. 400 for all: the
 * catalogue has no 408 or 431, as it has no 413 or 415 (those are 400 INVALID_INPUT here too).
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers exceed the size limit'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'Request timed out before it was complete'
        : 'Malformed HTTP request';
  const body = JSON.stringify(errors.invalidInput(message).toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  // Also set here: Fastify's framework errors (bad URL encoding, over-long path parameters) are
  // answered before any onRequest hook runs, so the hook that normally sets it never sees them.
  reply.header('x-request-id', String(reply.request.id));
  if (err.headers) reply.headers(err.headers);
  return reply.code(err.status).type('application/json; charset=utf-8').send(err.toBody());
}

/** Maps any thrown value to an ApiError; logs the unexpected ones. */
export function toApiError(err: unknown, req: FastifyRequest, bodyLimitBytes: number): ApiError {
  if (err instanceof ApiError) return err;
  const fe = err as Partial<FastifyError> & { validation?: unknown; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const where = fe.validationContext === 'body' ? 'body' : (fe.validationContext ?? 'request');
    const fieldErrors = fieldErrorsFrom(fe.validation, `(${where})`);
    const first = fieldErrors[0];
    const summary = first ? `${first.field} ${first.message}` : 'invalid';
    return errors.invalidInput(`Invalid ${where}: ${summary}`, fieldErrors);
  }
  if (fe.code && fe.code in BODY_ERRORS) {
    const msg = fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? `Request body exceeds ${bodyLimitBytes} bytes` : BODY_ERRORS[fe.code]!;
    return errors.invalidInput(msg);
  }
  if (err instanceof SyntaxError || (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)) {
    // JSON syntax errors and Fastify's other request-shape errors: the client's fault, said plainly.
    return errors.invalidInput(err instanceof SyntaxError ? 'Body is not valid JSON' : 'Malformed request');
  }
  req.log.error({ err }, 'unhandled error');
  return errors.internal(String(req.id));
}

/**
 * Installs the error handler and the not-found handler. The latter answers 405 with `Allow` when
 * the path exists for other methods, which it learns from a shadow router fed by every route.
 */
export function installErrorHandling(app: FastifyInstance, bodyLimitBytes: number): void {
  const shadow = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if ((METHODS as readonly string[]).includes(m)) {
        try {
          shadow.on(m as (typeof METHODS)[number], route.url, () => {});
        } catch {
          // A route registered twice under one method (HEAD shadows): already known.
        }
      }
    }
  });

  app.setErrorHandler((err, req, reply) => sendError(reply, toApiError(err, req, bodyLimitBytes)));

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((m) => m !== req.method && shadow.find(m, path) !== null);
    if (allowed.length > 0) return sendError(reply, errors.methodNotAllowed(req.method, allowed));
    return sendError(reply, errors.routeNotFound(req.method, path));
  });
}
