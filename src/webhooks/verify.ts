/**
 * How a receiver verifies a Corridor webhook. README.md ("Verifying webhooks") shows this function
 * verbatim and the tests run it, so the documented snippet is known to work.
 */
// README-SNIPPET-START
import crypto from 'node:crypto';

/** True when `signatureHeader` (X-Grid-Signature) signs `rawBody` (the exact bytes received). */
export function verifyWebhook(rawBody: Buffer, signatureHeader: string, publicKeyPem: string): boolean {
  const { s } = JSON.parse(signatureHeader) as { v: string; s: string };
  return crypto.verify('sha256', rawBody, publicKeyPem, Buffer.from(s, 'base64'));
}
// README-SNIPPET-END
