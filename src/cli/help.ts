/**
 * The `corridor` usage text and each command's help, and the answer to a help request. Loads no
 * server code, so `--help` prints at once (src/cli/entry.ts answers it before main.ts is loaded).
 */
import { walletCommand } from './wallet.ts';

export const USAGE = `Usage: corridor <command> [options]

Commands:
  start                                   start the server (migrates the store first)
  migrate                                 apply pending store migrations and exit
  platform create --name N [--currency USD] [--environment SANDBOX|PRODUCTION]
                                          create an isolated platform and print its token
  platform show [--id PLATFORM_ID]        print a platform (default: the sandbox platform)
  ledger-check [--platform PLATFORM_ID]   recompute balances from postings; exit 1 on any difference
  webhooks listen [--port 8081] [--host 127.0.0.1] [--platform PLATFORM_ID | --public-key-file F] [--json] [--forward-to URL]
                                          receive webhooks locally: check each signature, print each event
  trigger EVENT_TYPE [--url URL]          make a webhook event happen for real on a running server (sandbox)
  fixtures load FILE.json | export [--out FILE] [--url URL]
                                          load or export customers, accounts and balances (sandbox)
  wallet keygen|encrypt-otp|stamp|decrypt-bundle …
                                          embedded-wallet client helpers (see: corridor wallet help)

Configuration comes from the environment: PORT, HOST, DATA_DIR, DATABASE_URL, LOG_LEVEL,
CORRIDOR_TOKEN_ID, CORRIDOR_CLIENT_SECRET, CORRIDOR_ADMIN_TOKEN (see README).
"corridor <command> --help" describes one command.`;

const STORE_ENV = `The store: DATA_DIR (default ./.corridor, the embedded SQLite store), or DATABASE_URL (postgres://…).`;

/** `corridor <command> [<subcommand>] --help`: printed to stdout, exit 0, nothing else done. */
const HELP: Record<string, string> = {
  start: `Usage: corridor start

Start the server: open the store (creating it on first use), apply pending migrations, make sure
the sandbox platform and its API token exist, listen, and print the base URL, the token's
credentials and a curl line to try. Ctrl-C (SIGINT) or SIGTERM stops it.

On the embedded SQLite store one server owns a DATA_DIR: a second "corridor start" on the same
DATA_DIR exits at once (the short commands below still work beside a running server). Several
servers can share one PostgreSQL store (DATABASE_URL).

Environment: PORT (8080; 0 picks a free port), HOST (127.0.0.1), DATA_DIR, DATABASE_URL,
LOG_LEVEL, CORRIDOR_TOKEN_ID and CORRIDOR_CLIENT_SECRET (fixed credentials for the sandbox token),
CORRIDOR_ADMIN_TOKEN (enables /_admin), and the rest listed in the README ("Configuration").`,
  migrate: `Usage: corridor migrate

Apply the store's pending migrations and exit ("corridor start" also does this). Safe beside a
running server and from several processes at once.

${STORE_ENV}`,
  platform: `Usage: corridor platform create --name NAME [--currency USD] [--environment SANDBOX|PRODUCTION]
       corridor platform show [--id PLATFORM_ID]

  create   create an isolated platform (its internal account, webhook key and an API token with
           every permission) and print it as JSON with the token's secret, shown this once
  show     print a platform and its webhook verification key (default: the sandbox platform)

${STORE_ENV}`,
  'platform create': `Usage: corridor platform create --name NAME [--currency USD] [--environment SANDBOX|PRODUCTION]

Create an isolated platform: an internal account in its currency, a webhook signing key and an
API token with every permission. Prints {"platform", "token"} as JSON; token.clientSecret is
shown this once.

  --name NAME            the platform's name (required)
  --currency CODE        its fiat currency (default USD)
  --environment ENV      SANDBOX (default) or PRODUCTION (sandbox routes answer 403)

${STORE_ENV}`,
  'platform show': `Usage: corridor platform show [--id PLATFORM_ID]

Print a platform and its webhook verification key (public) as JSON; exit 1 when there is no such
platform.

  --id PLATFORM_ID       the platform (default: the sandbox platform "corridor start" created)

${STORE_ENV}`,
  'ledger-check': `Usage: corridor ledger-check [--platform PLATFORM_ID]

Recompute every balance from the ledger's postings and compare it with the stored balances.
Prints the report as JSON, then "ledger check: clean" (exit 0) or the number of problems (exit 1).

  --platform PLATFORM_ID check one platform only (exit 1 when it does not exist)

${STORE_ENV}`,
  webhooks: `Usage: corridor webhooks listen [--port 8081] [--host 127.0.0.1] [--platform PLATFORM_ID | --public-key-file F] [--json] [--forward-to URL]

  listen   receive webhooks locally: check each signature and print each event
           ("corridor webhooks listen --help" has the details)`,
  'webhooks listen': `Usage: corridor webhooks listen [--port 8081] [--host 127.0.0.1] [--platform PLATFORM_ID | --public-key-file F] [--json] [--forward-to URL]

A local webhook receiver: it checks each request's signature against a platform's public key and
prints one line per event (time, type, event id, resource, signature ok|INVALID) to stdout,
answering 200, or 401 to a missing or bad signature. Point the platform at the URL it prints
(PATCH /config {"webhookEndpoint": …}). Ctrl-C or SIGTERM stops it.

  --port PORT            where to listen (default 8081; 0 picks a free port)
  --host HOST            the interface (default 127.0.0.1)
  --platform ID          verify with this platform's key, read from the store
                         (default: the sandbox platform)
  --public-key-file F    verify with the public key (PEM) in F instead; no store needed
  --json                 one JSON object per event instead of a text line
  --forward-to URL       also send each correctly signed event on to URL (your app), the same
                         bytes and signature headers; the app's answer (status and body) is the
                         answer Corridor gets (502 when it cannot be reached in 10 s)

${STORE_ENV}`,
};

const CLIENT_ENV = `It talks to a running server over HTTP: --url URL (default http://127.0.0.1:$PORT, PORT 8080).
Credentials: CORRIDOR_CLIENT_ID (or CORRIDOR_TOKEN_ID) and CORRIDOR_CLIENT_SECRET, else the
credentials "corridor start" saved in DATA_DIR (./.corridor). Sandbox platforms only.`;

Object.assign(HELP, {
  trigger: `Usage: corridor trigger EVENT_TYPE [--url URL]

Make a webhook event happen for real (POST /sandbox/trigger): the server creates what the event
needs (a customer, accounts, funding, a quote steered by the sandbox magic values …) through the
same code as the API, runs it, and sends the webhook. Prints the event id and the ids it created.
OUTGOING_PAYMENT.EXPIRED moves the platform's sandbox clock 5 minutes. Exit 1 when the server
refuses (e.g. an event type that cannot be triggered: the answer lists those that can).

  e.g. corridor trigger OUTGOING_PAYMENT.FAILED      (case does not matter)

${CLIENT_ENV}`,
  fixtures: `Usage: corridor fixtures load FILE.json [--url URL]
       corridor fixtures export [--out FILE] [--url URL]

  load     create the file's customers, balances and external accounts in one transaction
           (POST /sandbox/fixtures; all or nothing) and print the ids they got
  export   write the platform's customers, balances and external accounts as such a file
           (GET /sandbox/fixtures) to stdout, or to FILE with --out

The format is docs/fixtures.schema.json (README, "Triggering events and loading fixtures").

${CLIENT_ENV}`,
});

/** Whether `--help`/`-h` is among the arguments (before a `--`). */
export function helpRequested(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** The help of `command [sub]`: the subcommand's when it has its own, else the command's. */
function helpFor(command: string, sub: string | undefined): string | undefined {
  return (sub !== undefined ? HELP[`${command} ${sub}`] : undefined) ?? HELP[command];
}

/**
 * Answers `argv` when it asks for help — nothing, `--help`/`-h`, `help [command [sub]]`, or a
 * command with `--help`/`-h` among its arguments — before any configuration is read or store
 * touched. Returns the exit code (0; 2 for no command or an unknown one), or undefined when `argv`
 * is not a help request. `wallet …` answers its own help.
 */
export async function helpCommand(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === 'wallet' || (command !== 'help' && !helpRequested(rest))) return undefined;
  const [topic, sub] = command === 'help' ? rest : [command, rest[0]];
  if (topic === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (topic === 'wallet') return walletCommand(sub === undefined ? ['help'] : [sub, '--help']);
  const text = helpFor(topic, sub);
  if (text === undefined) {
    process.stderr.write(`corridor: unknown command "${topic}"\n\n${USAGE}\n`);
    return 2;
  }
  process.stdout.write(`${text}\n`);
  return 0;
}
