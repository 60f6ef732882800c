/** What route plugins and services are given: configuration, injected dependencies and the store. */
import type { Kysely } from 'kysely';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import type { JobHandler, JobRunner } from './jobs/jobs.ts';
import type { Store } from './store/db.ts';
import type { WebhookDeliverer } from './webhooks/deliverer.ts';
import type { Database } from './store/schema.ts';

export interface AppContext {
  config: Config;
  deps: Deps;
  store: Store;
  db: Kysely<Database>;
  /** Handlers of durable jobs by kind; modules register theirs when their routes are registered. */
  jobHandlers: Map<string, JobHandler>;
  /** Runs due jobs in the background; `drain(platformId)` runs them now (sandbox clock advance). */
  jobs: JobRunner;
  /** Delivers outbox events as signed webhooks; `drain(platformId)` delivers what is due now. */
  webhooks: WebhookDeliverer;
}
