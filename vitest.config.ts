import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two lanes run the same suite: SQLite always, PostgreSQL when TEST_DATABASE_URL is set.
 * Each test file starts its own server (and, on SQLite, its own store) and its own platforms.
 */
const lanes = [{ name: 'sqlite', store: 'sqlite' }];
/** PostgreSQL-only: several processes on one database (README, scale-out), the PostgreSQL driver. */
const POSTGRES_ONLY = ['test/multiprocess/**', 'test/store/pg-*.test.ts'];
if (process.env.TEST_DATABASE_URL) lanes.push({ name: 'postgres', store: 'postgres' });

export default defineConfig({
  test: {
    projects: lanes.map((l) => ({
      extends: true,
      test: {
        name: l.name,
        include: ['test/**/*.test.ts'],
        exclude: l.store === 'postgres' ? configDefaults.exclude : [...configDefaults.exclude, ...POSTGRES_ONLY],
        env: { CORRIDOR_TEST_STORE: l.store },
        // A schema per test file on PostgreSQL: see the file.
        setupFiles: l.store === 'postgres' ? ['test/helpers/pg-schema.setup.ts'] : [],
        testTimeout: 30_000,
        hookTimeout: 60_000,
        pool: 'forks',
      },
    })),
  },
});
