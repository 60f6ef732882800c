/**
 * What a bench scenario is. A scenario gets a freshly started Corridor (its own child process, data
 * directory and credentials), prepares whatever data it needs over HTTP, and returns the request
 * the load generator sends — either one fixed request (cheapest for the loader) or a factory that
 * is called before every request (unique idempotency keys, ids from a pool …).
 *
 * To add one: write `bench/scenarios/<name>.ts` exporting a `Scenario` and list it in
 * `bench/scenarios/index.ts`.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRequest {
  method: HttpMethod;
  /** Path with query string, e.g. `/2025-10-13/platform/internal-accounts?currency=USD`. */
  path: string;
  headers?: Record<string, string>;
  /** Already-serialised body (set `content-type` in headers). */
  body?: string;
}

/** Called before every request with a counter unique within one load run (0, 1, 2 …). */
export type RequestFactory = (seq: number) => HttpRequest;

export interface Credentials {
  platformId: string;
  clientId: string;
  clientSecret: string;
  /** `Basic base64(clientId:clientSecret)`. */
  authorization: string;
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
}

/** The Corridor child a scenario runs against. */
export interface CorridorHandle {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** `/2025-10-13` */
  basePath: string;
  store: 'sqlite' | 'postgres';
  adminToken: string;
  /**
   * A platform with an all-permission token. On SQLite this is the bootstrap sandbox platform
   * (fixed CORRIDOR_TOKEN_ID / CORRIDOR_CLIENT_SECRET); on PostgreSQL the bench never rewrites a
   * shared database's bootstrap token, so it creates an isolated platform through the admin API.
   */
  platform(): Promise<Credentials>;
  /** A new isolated platform (POST /_admin/platforms). */
  newPlatform(name?: string): Promise<Credentials>;
  /** One HTTP request for setup (not measured). `path` is absolute (include basePath). */
  request(method: HttpMethod, path: string, opts?: { headers?: Record<string, string>; json?: unknown }): Promise<JsonResponse>;
}

/** The bare-Fastify route the scenario is compared against: same method and path, canned response. */
export interface BaselineRoute {
  method: HttpMethod;
  /** Route path without query string. */
  path: string;
  status: number;
  /** JSON body the bare route returns (captured from Corridor's own response). */
  body: unknown;
}

export interface PreparedScenario {
  request: HttpRequest | RequestFactory;
  /** What the bare route answers; omit when a bare comparison makes no sense for this scenario. */
  baseline?: BaselineRoute;
  /** Runs after the measurement, while Corridor is still up (e.g. assert the ledger is clean). */
  verify?(): Promise<void>;
  /**
   * Runs between the warm-up and the measured window: waits until the background work the warm-up
   * left behind is done (payments still settling), so the window starts from a server in its steady
   * state rather than from a cold start's backlog. Resolves to a line for the log. Closed loop
   * only: an open loop's warm-up runs straight into its window at the same rate (bench/paced.ts),
   * so the window starts in the steady state itself, settlements running as they do all along.
   */
  settle?(): Promise<string>;
  /**
   * Figures autocannon cannot see (e.g. webhooks that arrive after the HTTP responses). Runs right
   * after the measured window, before `verify`, while Corridor is still up; its figures are printed
   * under the table and written to `--json`.
   */
  extraReport?(window: MeasuredWindow): Promise<ScenarioReport>;
}

/** The measured load window, on CLOCK_MONOTONIC in µs (`process.hrtime.bigint() / 1000`). */
export interface MeasuredWindow {
  startUs: number;
  endUs: number;
}

export interface ScenarioReport {
  /** Label (with its unit) → value, in print order. */
  figures: Record<string, number | string>;
  /** Lines printed after the figures: what they mean, what has no bare equivalent. */
  notes?: string[];
  /** Why the run failed; any makes the bench exit 1 once everything is printed. */
  failures: string[];
}

export interface Targets {
  /** Corridor req/s ÷ bare route req/s must be at least this. */
  minRatio?: number;
  /** Corridor p99 latency must be below this, in ms. */
  maxP99Ms?: number;
}

export interface Scenario {
  name: string;
  /** One line for --help and the report. */
  summary: string;
  targets?: Targets;
  /** Stores the scenario can run on (default both). */
  stores?: Array<'sqlite' | 'postgres'>;
  /**
   * Connections to load it with when --connections is not given (default 50). A scenario whose
   * target is a single request's latency rather than throughput sets fewer: with N connections in
   * a closed loop the mean latency is N ÷ throughput, so 50 would measure the queue.
   */
  connections?: number;
  /** Left out of the default run (`npm run bench` without --scenario): run it by name. */
  optIn?: boolean;
  /**
   * Fills the store before the Corridor child starts (e.g. a large data set written with bulk SQL:
   * the SQLite data directory is fresh and empty; the PostgreSQL database is the one given). May
   * answer another database URL for the child, e.g. one whose search_path is a dedicated schema.
   */
  prepareStore?(store: StoreLocation): Promise<{ databaseUrl?: string } | undefined>;
  setup(corridor: CorridorHandle): Promise<PreparedScenario>;
}

/** Where the Corridor child's store lives, before it starts. */
export type StoreLocation = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; databaseUrl: string };
