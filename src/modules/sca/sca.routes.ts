/**
 * Strong Customer Authentication (issue #23): the area's routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';

export function scaRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
