/**
 * `POST /sandbox/trigger`: makes one webhook event happen for real. The recipe's objects are
 * created in one unit of work (all or nothing) — or, for the few that need a job to run first (a
 * card must be provisioned before it authorizes), in a unit per step with the due jobs run between;
 * then, as after a sandbox clock advance, the platform's due jobs and webhooks run before the
 * answer, so the outcome (a settlement, a failure and its refund) has happened and been sent when
 * the caller reads the response.
 */
import type { AppContext } from '../../context.ts';
import type { PlatformRow } from '../../store/schema.ts';
import { runUnit } from '../../unit.ts';
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import { advanceClock } from '../sandbox/sandbox.service.ts';
import { firstEventAbout } from '../webhooks/deliveries.repo.ts';
import { type Created, recipeFor, type Steps } from './trigger.recipes.ts';

export interface TriggerResult {
  eventType: WebhookType;
  event: { id: string; type: string; resourceId: string };
  created: Created;
  clockAdvancedSeconds: number;
}

export async function triggerEvent(ctx: AppContext, platform: PlatformRow, eventType: WebhookType): Promise<TriggerResult> {
  const recipe = recipeFor(eventType);
  const steps: Steps = {
    ctx,
    platform,
    unit: (fn) => runUnit(ctx, platform, fn),
    async settle() {
      await ctx.jobs.drain(platform.id);
      await ctx.webhooks.drain(platform.id);
    },
  };
  const result = await recipe.run(steps);
  if (recipe.clockMs > 0) await steps.unit((u) => advanceClock(u, recipe.clockMs));
  await steps.settle();
  const event = await firstEventAbout(ctx.db, platform.id, result.resourceId, eventType);
  // A recipe that did not produce its event is a bug in the recipe, not the caller's mistake.
  if (!event) throw new Error(`trigger ${eventType}: no such event for ${result.resourceId}`);
  return {
    eventType,
    event: { id: event.id, type: event.type, resourceId: event.resource_id },
    created: result.created,
    clockAdvancedSeconds: Math.ceil(recipe.clockMs / 1000),
  };
}
