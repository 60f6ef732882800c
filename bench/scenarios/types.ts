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
  setup(corridor: CorridorHandle): Promise<PreparedScenario>;
}
