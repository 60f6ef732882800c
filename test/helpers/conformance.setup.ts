/**
 * Fails a test whose webhooks violated the live schema (see conformance.ts): receivers record
 * violations as the bodies arrive, and they are reported here when the test ends.
 */
import { afterAll, afterEach } from 'vitest';
import { takeWebhookViolations, writeCheckedReport } from './conformance.ts';

afterEach(() => {
  const found = takeWebhookViolations();
  if (found.length > 0) throw new Error(found.join('\n\n'));
});

afterAll(() => writeCheckedReport());
