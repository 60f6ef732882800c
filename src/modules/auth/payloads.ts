/**
 * `payloadToSign` values: Turnkey-style activity JSON with keys in alphabetical order, as the live
 * API's examples show (facts-auth §1.4). Corridor adds the challenge's `requestId`, so a stamp
 * made for one challenge can never verify against another with otherwise equal content.
 */
import type { PlatformRow } from '../../store/schema.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';

export interface Activity {
  type: string;
  parameters: Record<string, unknown>;
}

/** The wallet organisation id of a platform, as it appears in signed payloads. */
export function organizationId(platform: PlatformRow): string {
  return `org_${platform.id.replace(/^Platform:/, '')}`;
}

export function activityPayload(platform: PlatformRow, requestId: string, nowMs: number, a: Activity): string {
  return canonicalJson({
    organizationId: organizationId(platform),
    parameters: a.parameters,
    requestId,
    timestampMs: String(nowMs),
    type: a.type,
  });
}
