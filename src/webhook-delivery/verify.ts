/**
 * How a receiver verifies a Corridor webhook. README.md ("Verifying webhooks") shows this function
 * verbatim and the tests run it, so the documented snippet is known to work.
 */
// README-SNIPPET-START
import crypto from 'node:crypto';

/**
 * True when `signatureHeader` (X-Grid-Signature) signs `rawBody` (the exact bytes received).
 * False, never an exception, for a missing or malformed header or signature; only a bad
 * `publicKeyPem` (your configuration, not the request) throws.
 */
export function verifyWebhook(rawBody: Buffer, signatureHeader: string | undefined, publicKeyPem: string): boolean {
  const publicKey = crypto.createPublicKey(publicKeyPem);
  try {
    const { s } = JSON.parse(signatureHeader ?? '') as { v?: unknown; s?: unknown };
    return typeof s === 'string' && crypto.verify('sha256', rawBody, publicKey, Buffer.from(s, 'base64'));
  } catch {
    return false;
  }
}
// README-SNIPPET-END
