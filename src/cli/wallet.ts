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

class WalletUsageError extends Error {}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
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
