/** What route plugins and services are given: configuration, injected dependencies and the store. */
import type { Kysely } from 'kysely';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import type { JobRunner } from './jobs/jobs.ts';
import type { Store } from './store/db.ts';
import type { SecretBox } from './store/secret-box.ts';
import type { WebhookDeliverer } from './webhook-delivery/deliverer.ts';
import type { Database } from './store/schema.ts';

export interface AppContext {
  config: Config;
  deps: Deps;
  store: Store;
  db: Kysely<Database>;
  /** Seals and opens the private keys the store holds (CORRIDOR_SECRET_KEY; clear without it). */
  secrets: SecretBox;
  /** Runs due jobs in the background; `drain(platformId)` runs them now (sandbox clock advance). */
  jobs: JobRunner;
  /** Delivers outbox events as signed webhooks; `drain(platformId)` delivers what is due now. */
  webhooks: WebhookDeliverer;
}
