/** The scenario registry: `--scenario <name>` picks from here; the default runs all, in this order. */
import { paymentScenario } from './payment.ts';
import { readScenario } from './read.ts';
import type { Scenario } from './types.ts';

export const SCENARIOS: readonly Scenario[] = [readScenario, paymentScenario];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
