/** The fault-injection table (migration 0026), added to the store's Database type. */
import type { Selectable } from 'kysely';

export interface SandboxFaultsTable {
  /** One row per platform with fault rules; none without. */
  platform_id: string;
  /** The rules as normalised JSON (FaultRule[], faults.rules.ts). */
  rules: string;
  updated_at: string;
}

export type SandboxFaultsRow = Selectable<SandboxFaultsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    sandbox_faults: SandboxFaultsTable;
  }
}
