/** The scenario registry: `--scenario <name>` picks from here; the default runs all, in this order. */
import { flowScenario } from './flow.ts';
import { listScenario } from './list.ts';
import { paymentAccountsScenario } from './payment-accounts.ts';
import { paymentScenario } from './payment.ts';
import { readScenario } from './read.ts';
import type { Scenario } from './types.ts';

export const SCENARIOS: readonly Scenario[] = [readScenario, paymentScenario, paymentAccountsScenario, flowScenario, listScenario];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
