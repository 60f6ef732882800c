/**
 * `corridor wallet …`: the embedded-wallet client helpers on the command line, so every auth flow
 * can be finished with curl. Needs no configuration or store. Results go to stdout, one line each;
 * exit 0 ok, 1 a crypto failure (e.g. a bundle that does not decrypt), 2 bad usage or a bad key.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { decryptBundle, decryptExportBundleText, encryptOtp, generateKeyPair, stamp } from '../wallet/client.ts';
import { InvalidKeyError } from '../wallet/crypto/keys.ts';

export const WALLET_USAGE = `Usage: corridor wallet <subcommand>

Subcommands:
  keygen [--compressed]                  new P-256 key pair as JSON {"privateKey","publicKey"};
                                         the public key is uncompressed (04…) unless --compressed (02/03…)
  encrypt-otp <bundle> <pubHex> <code> [--signer-key HEX]
                                         encrypt {otp_code, public_key} to an otpEncryptionTargetBundle;
                                         prints the encryptedOtpBundle (a JSON text to send as a string);
                                         --signer-key pins the server's published enclaveQuorumPublic
  stamp <privHex> <payload>              the Service-Wallet-Signature header value over payload, byte for byte
  decrypt-bundle <bundle> <privHex> [--text]
                                         decrypt encryptedSessionSigningKey (prints the session private key hex)
                                         or encryptedWalletCredentials (--text prints the mnemonic)

An argument given as "-" is read from standard input (one trailing newline is dropped).`;

/** Each subcommand's own help (`corridor wallet <subcommand> --help`). */
const SUBCOMMAND_HELP: Record<string, string> = {
  keygen: `Usage: corridor wallet keygen [--compressed]

Print a new P-256 key pair as JSON {"privateKey","publicKey"} (hex). The public key is
uncompressed (04…) unless --compressed (02/03…), the form a TEK or session key takes.`,
  'encrypt-otp': `Usage: corridor wallet encrypt-otp <bundle> <pubHex> <code> [--signer-key HEX]

Encrypt {otp_code, public_key} to a credential's otpEncryptionTargetBundle and print the
encryptedOtpBundle (a JSON text, sent as a string in POST /auth/credentials/{id}/verify).

  <bundle>          the otpEncryptionTargetBundle
  <pubHex>          the public key that becomes the session key (the TEK's)
  <code>            the one-time code (000000 in the sandbox)
  --signer-key HEX  refuse a bundle not signed by this key (the server's enclaveQuorumPublic)

An argument given as "-" is read from standard input.`,
  stamp: `Usage: corridor wallet stamp <privHex> <payload>

Print the Service-Wallet-Signature header value over <payload> exactly as given (byte for byte):
the payloadToSign of a 202 challenge, signed with a session (or TEK) private key.

An argument given as "-" is read from standard input (one trailing newline is dropped).`,
  'decrypt-bundle': `Usage: corridor wallet decrypt-bundle <bundle> <privHex> [--text]

Decrypt an encryptedSessionSigningKey (prints the session private key as hex) or, with --text,
an encryptedWalletCredentials export bundle (prints the mnemonic), with the private key whose
public half was sent with the request.

An argument given as "-" is read from standard input.`,
};

/** `--help`/`-h` among the arguments (before a `--`). */
function helpRequested(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

class WalletUsageError extends Error {}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Replaces a single "-" argument with standard input. */
async function resolveStdin(args: string[]): Promise<string[]> {
  const dashes = args.filter((a) => a === '-').length;
  if (dashes > 1) throw new WalletUsageError('only one argument can be read from standard input');
  if (dashes === 0) return args;
  const input = await readStdin();
  return args.map((a) => (a === '-' ? input : a));
}

function positionals<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, count: number, names: string) {
  const parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  if (parsed.positionals.length !== count) throw new WalletUsageError(`expected ${names}`);
  return parsed;
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export async function walletCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    // `wallet <subcommand> --help`: that subcommand's help, before anything is parsed or read.
    if (sub !== undefined && helpRequested(rest)) {
      const text = SUBCOMMAND_HELP[sub];
      if (text === undefined) throw new WalletUsageError(`unknown wallet subcommand "${sub}"`);
      out(text);
      return 0;
    }
    switch (sub) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out(WALLET_USAGE);
        return sub === undefined ? 2 : 0;
      case 'keygen': {
        const { values } = positionals(rest, { compressed: { type: 'boolean' } }, 0, 'no arguments');
        out(JSON.stringify(generateKeyPair({ compressed: values.compressed === true })));
        return 0;
      }
      case 'encrypt-otp': {
        const { values, positionals: p } = positionals(rest, { 'signer-key': { type: 'string' } }, 3, '<bundle> <pubHex> <code>');
        const [bundle, pub, code] = (await resolveStdin(p)) as [string, string, string];
        const signer = values['signer-key'];
        out(encryptOtp(bundle, pub, code, typeof signer === 'string' ? { expectedSignerPublicKey: signer } : {}));
        return 0;
      }
      case 'stamp': {
        const { positionals: p } = positionals(rest, {}, 2, '<privHex> <payload>');
        const [priv, payload] = (await resolveStdin(p)) as [string, string];
        out(stamp(priv, payload));
        return 0;
      }
      case 'decrypt-bundle': {
        const { values, positionals: p } = positionals(rest, { text: { type: 'boolean' } }, 2, '<bundle> <privHex>');
        const [bundle, priv] = (await resolveStdin(p)) as [string, string];
        out(values.text === true ? decryptExportBundleText(bundle, priv) : decryptBundle(bundle, priv));
        return 0;
      }
      default:
        throw new WalletUsageError(`unknown wallet subcommand "${sub}"`);
    }
  } catch (err) {
    const argError = typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('ERR_PARSE_ARGS');
    if (err instanceof WalletUsageError || argError) {
      process.stderr.write(`corridor wallet: ${(err as Error).message}\n\n${WALLET_USAGE}\n`);
      return 2;
    }
    if (err instanceof InvalidKeyError) {
      process.stderr.write(`corridor wallet: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`corridor wallet: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
