/**
 * The bare comparison server: plain Fastify answering the scenario's method + path with the JSON
 * captured from Corridor — no auth, no store, no logging, no hooks, no schemas. Run by bench/run.ts
 * as its own child process:
 *
 *   BENCH_BASELINE_ROUTES=/tmp/routes.json PORT=0 node --import tsx bench/baseline.ts
 *
 * routes.json is an array of BaselineRoute. Prints `baseline listening on http://host:port`.
 */
import fs from 'node:fs';
import Fastify from 'fastify';
import type { BaselineRoute } from './scenarios/types.ts';

const routesFile = process.env.BENCH_BASELINE_ROUTES;
if (!routesFile) {
  process.stderr.write('baseline: BENCH_BASELINE_ROUTES (a JSON file of routes) is required\n');
  process.exit(2);
}
const routes = JSON.parse(fs.readFileSync(routesFile, 'utf8')) as BaselineRoute[];

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
for (const r of routes) {
  app.route({
    method: r.method,
    url: r.path,
    handler: async (_req, reply) => {
      reply.code(r.status);
      return r.body;
    },
  });
}

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const addr = app.server.address();
const port = typeof addr === 'object' && addr ? addr.port : 0;
process.stdout.write(`baseline listening on http://127.0.0.1:${port}\n`);

const stop = () => {
  void app.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
