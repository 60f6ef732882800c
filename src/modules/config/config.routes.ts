/** GET/PATCH /config: the platform configuration. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses } from '../../http/schemas.ts';
import { ok, write } from '../../http/write.ts';
import { PlatformConfigSchema, PlatformConfigUpdateSchema } from './config.schemas.ts';
import { checkConfigPatch, configToWire, updateConfig } from './config.service.ts';

const TAG = 'Platform Configuration';

export function configRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/config',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getPlatformConfig',
          tags: [TAG],
          summary: 'Get the platform configuration',
          response: { 200: PlatformConfigSchema, ...errorResponses(401, 403) },
        },
      },
      async (req) => configToWire(platformOf(req).platform),
    );

    app.patch(
      '/config',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updatePlatformConfig',
          tags: [TAG],
          summary: 'Update the platform configuration (partial; see merge rules)',
          body: PlatformConfigUpdateSchema,
          response: { 200: PlatformConfigSchema, ...errorResponses(400, 401, 403, 501) },
        },
      },
      async (req, reply) => {
        // Checked before the unit opens: the endpoint check may wait on DNS.
        await checkConfigPatch(ctx, platformOf(req).platform, req.body);
        return write(ctx, req, reply, async (u) => ok(await updateConfig(u, req.body)));
      },
    );
  };
}
