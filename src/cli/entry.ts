/**
 * What `bin/corridor.js` runs. Help and the wallet helpers are answered here without loading the
 * server's code (the HTTP app, the store drivers), so they print in a fraction of a second; every
 * other command goes to main.ts.
 */
import { helpCommand } from './help.ts';
import type { PrecompiledValidators } from '../http/validation.ts';
import { walletCommand } from './wallet.ts';

export interface RunOptions {
  /** The request validators the build compiled (dist/validators/); each module loads on its route's first request. */
  validators?: () => PrecompiledValidators | undefined;
  /** The OpenAPI document the build wrote (dist/openapi.json), read on the first request for it. */
  openapi?: () => string;
  /** Its compact form for /docs (dist/openapi-docs.json). */
  openapiDocs?: () => string;
}

export async function run(argv: string[], opts: RunOptions = {}): Promise<number> {
  const help = await helpCommand(argv);
  if (help !== undefined) return help;
  if (argv[0] === 'wallet') return walletCommand(argv.slice(1));
  // `trigger` and `fixtures` are HTTP clients of a running server: no store, no server code.
  if (argv[0] === 'trigger' || argv[0] === 'fixtures') {
    const { clientCommand } = await import('./trigger.ts');
    return clientCommand(argv);
  }
  const [{ main }, { usePrecompiledValidators }, { usePrebuiltOpenApi }] = await Promise.all([
    import('../main.ts'),
    import('../http/validation.ts'),
    import('../http/openapi-document.ts'),
  ]);
  const validators = opts.validators?.();
  if (validators) usePrecompiledValidators(validators);
  if (opts.openapi) usePrebuiltOpenApi(opts.openapi, opts.openapiDocs);
  return main(argv);
}
