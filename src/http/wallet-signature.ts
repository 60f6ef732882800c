/**
 * The embedded-wallet signature a request carries, read once, here, into a value services take:
 * the stamp (`Service-Wallet-Signature`, or its live-API alias `Grid-Wallet-Signature`) and the
 * `Request-Id` of a signed retry. An empty header counts as absent; when both spellings are sent,
 * the spec's name wins.
 */
import type { FastifyRequest } from 'fastify';

export const SIGNATURE_HEADER = 'service-wallet-signature';
export const SIGNATURE_HEADER_ALIAS = 'grid-wallet-signature';
export const REQUEST_ID_HEADER = 'request-id';

export interface WalletSignature {
  stamp: string | undefined;
  requestId: string | undefined;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

export function walletSignatureOf(req: FastifyRequest): WalletSignature {
  return { stamp: header(req, SIGNATURE_HEADER) ?? header(req, SIGNATURE_HEADER_ALIAS), requestId: header(req, REQUEST_ID_HEADER) };
}
