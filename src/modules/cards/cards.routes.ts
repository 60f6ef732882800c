/**
 * Cards (issue #24): the area's routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';

export function cardRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
