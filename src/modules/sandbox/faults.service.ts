/**
 * The fault rules of a platform: reading, replacing and clearing them (POST/GET/DELETE
 * /sandbox/faults). Replacing checks the rule set against the routes the server serves and the
 * platform's clock, inside the unit of work, and stores it normalised.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../http/errors.ts';
import type { Database } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { deleteFaults, findFaults, putFaults } from './faults.repo.ts';
import { checkRules, normaliseRules, type FaultRule } from './faults.rules.ts';

export interface FaultsView {
  rules: FaultRule[];
  /** When the rules were last set (platform clock); absent when the platform has none. */
  updatedAt?: string;
}

export async function getFaultRules(db: Kysely<Database>, platformId: string): Promise<FaultsView> {
  const row = await findFaults(db, platformId);
  return row ? { rules: JSON.parse(row.rules) as FaultRule[], updatedAt: row.updated_at } : { rules: [] };
}

/** Replaces the platform's rules (an empty list clears them). 400 INVALID_INPUT naming each bad field. */
export async function setFaultRules(u: Unit, rules: FaultRule[], faultableRoutes: ReadonlySet<string>): Promise<FaultsView> {
  const problems = checkRules(rules, { faultableRoutes, nowMs: u.nowMs });
  if (problems.length > 0) throw errors.invalidInput(`Invalid fault rules: ${problems[0]!.field} ${problems[0]!.message}`, problems);
  if (rules.length === 0) {
    await deleteFaults(u.trx, u.platform.id);
    return { rules: [] };
  }
  const stored = normaliseRules(rules);
  await putFaults(u.trx, u.platform.id, JSON.stringify(stored), u.at);
  return { rules: stored, updatedAt: u.at };
}

export async function clearFaultRules(u: Unit): Promise<void> {
  await deleteFaults(u.trx, u.platform.id);
}
