/** Types of scripts/build.mjs, for the tests' global setup. */
export function buildDist(options?: { ifStale?: boolean; quiet?: boolean }): Promise<boolean>;
