/**
 * Delegated signing keys (facts-delegated-keys): a P-256 key Corridor generates and keeps for a card
 * funding source — a card funded by an EMBEDDED_WALLET account — which, while ACTIVE, may stamp
 * quote executions from that wallet in place of a session key.
 *
 * Create is a three-leg signed retry; every leg carries the same body `{cardId, internalAccountId,
 * nickname}` and each stamp is made by an active session of the wallet:
 * 1. no signature headers: a keypair is made and kept (sealed) with a pending request whose payload
 *    creates the key's signer identity → 202;
 * 2. the stamp over that payload: the key is recorded PENDING (its identity exists) and a second
 *    pending request is issued whose payload grants it its policies → 202;
 * 3. the stamp over the second payload: the key becomes ACTIVE → 201.
 * Abandoned after leg 2, a key stays PENDING (listed, unable to sign, not blocking a new create). A
 * funding source has at most one ACTIVE key: a create is refused (409) on every leg while it has one.
 *
 * Revoke needs no wallet signature (the key deletes its own identity): ACTIVE → REVOKED, and the
 * private key is destroyed.
 */
import type { AppContext } from '../../context.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import type { InternalAccountRow, PlatformRow } from '../../store/schema.ts';
import { SECRET_COLUMNS, type SecretRef, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { createWalletStamp } from '../../wallet/crypto/stamp.ts';
import { findInternalAccount, findRequest } from '../auth/auth.repo.ts';
import { newSessionKey } from '../auth/crypto.ts';
import { activityPayload } from '../auth/payloads.ts';
import { issue, requestData, type Challenge, type Signed, verifyRetry } from '../auth/signed-retry.ts';
import { cardExists } from '../cards/cards.repo.ts';
import { delegatedKeyErrors as errs } from './delegated-keys.errors.ts';
import {
  findActiveKey,
  findActiveKeyForPair,
  findDelegatedKey,
  findFundingSource,
  forgetRequestData,
  insertDelegatedKey,
  insertFundingSource,
  listDelegatedKeys as listKeyRows,
  setKeyStatus,
} from './delegated-keys.repo.ts';
import type { DelegatedKeyCreate, DelegatedKeyListFilter, DelegatedKeyWire } from './delegated-keys.schemas.ts';
import type { CardFundingSourceRow, DelegatedKeyRow } from './delegated-keys.tables.ts';

/** The pending-request operations of the two signed legs (src/modules/auth/signed-retry.ts). */
const CREATE_IDENTITY = 'delegated-key.create';
const GRANT_POLICIES = 'delegated-key.activate';

/** Where a key's sealed private scalar lives: the AAD binds it to its row. */
function privateKeyRef(keyId: string): SecretRef {
  return secretRef(SECRET_COLUMNS.delegatedKey, keyId);
}

/** What the first leg keeps with its pending request (sealed): the key's id and keypair. */
interface KeyDraft {
  keyId: string;
  privateKey: string;
  publicKey: string;
}

export function delegatedKeyToWire(r: DelegatedKeyRow): DelegatedKeyWire {
  return {
    id: r.id,
    cardId: r.card_id,
    fundingSourceId: r.funding_source_id,
    accountId: r.account_id,
    publicKey: r.public_key,
    nickname: r.nickname,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

// ── Create: three legs ──────────────────────────────────────────────────────────────────────────

/** POST /auth/delegated-keys: a challenge (legs 1 and 2), then the ACTIVE key (leg 3). */
export async function createDelegatedKey(
  u: Unit,
  input: { signature: WalletSignature; body: DelegatedKeyCreate },
): Promise<Signed<DelegatedKeyWire>> {
  const { signature, body } = input;
  // The target is checked before any signature, on every leg.
  const wallet = await fundingWallet(u, body.internalAccountId);
  if (!(await cardExists(u.trx, u.platform.id, body.cardId))) throw errs.cardNotFound(body.cardId);
  const active = await findActiveKeyForPair(u.trx, u.platform.id, body.cardId, wallet.id);
  if (active) throw errs.activeExists(active.id, active.funding_source_id);

  if (signature.stamp === undefined && signature.requestId === undefined) {
    return { kind: 'challenge', challenge: await identityChallenge(u, wallet, body) };
  }
  // A retry answers the challenge of leg 1 or of leg 2: its Request-Id says which.
  const pending = signature.requestId === undefined ? undefined : await findRequest(u.trx, u.platform.id, signature.requestId);
  if (pending?.operation === GRANT_POLICIES) return { kind: 'done', value: await activate(u, signature, body, pending.target_id) };
  return { kind: 'challenge', challenge: await createIdentity(u, signature, wallet, body) };
}

/** The platform's EMBEDDED_WALLET account `id`: 404 when unknown, 400 for another account type. */
async function fundingWallet(u: Unit, id: string): Promise<InternalAccountRow> {
  const account = await findInternalAccount(u.trx, u.platform.id, id);
  if (!account) throw errs.walletNotFound(id);
  if (account.type !== 'EMBEDDED_WALLET') throw errs.notAWallet(id);
  return account;
}

function challengeTtlMs(u: Unit): number {
  return u.app.config.wallet.challengeSeconds * 1000;
}

/** Leg 1: a fresh keypair, kept sealed with the challenge whose payload creates its signer identity. */
async function identityChallenge(u: Unit, wallet: InternalAccountRow, body: DelegatedKeyCreate): Promise<Challenge> {
  const key = newSessionKey();
  const draft: KeyDraft = { keyId: u.deps.ids.next('DelegatedKey'), privateKey: key.privateKeyHex, publicKey: key.publicKeyCompressed };
  return issue(u, {
    operation: CREATE_IDENTITY,
    accountId: wallet.id,
    targetId: wallet.id,
    content: body,
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) =>
      activityPayload(u.platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
        parameters: {
          users: [
            {
              apiKeys: [{ apiKeyName: body.nickname, curveType: 'API_KEY_CURVE_P256', publicKey: draft.publicKey }],
              authenticators: [],
              oauthProviders: [],
              userName: draft.keyId,
              userTags: [],
            },
          ],
        },
      }),
    data: draft,
    ttlMs: challengeTtlMs(u),
  });
}

/**
 * Leg 2: the stamped identity challenge is consumed, the key recorded PENDING under its funding
 * source (recorded on first use), and the policies challenge issued.
 */
async function createIdentity(
  u: Unit,
  signature: WalletSignature,
  wallet: InternalAccountRow,
  body: DelegatedKeyCreate,
): Promise<Challenge> {
  const { request } = await verifyRetry(u, signature, { operation: CREATE_IDENTITY, targetId: wallet.id, content: body });
  const draft = requestData<KeyDraft>(u, request);
  if (draft === undefined) throw new Error(`pending request ${request.id} holds no delegated keypair`);
  // The private key now lives with the key alone (revocation destroys it there).
  await forgetRequestData(u.trx, u.platform.id, request.id);
  const source = await fundingSource(u, body.cardId, wallet.id);
  const row: DelegatedKeyRow = {
    id: draft.keyId,
    platform_id: u.platform.id,
    funding_source_id: source.id,
    card_id: source.card_id,
    account_id: wallet.id,
    public_key: draft.publicKey,
    private_key: u.app.secrets.seal(draft.privateKey, privateKeyRef(draft.keyId)),
    nickname: body.nickname,
    status: 'PENDING',
    created_at: u.at,
    updated_at: u.at,
  };
  await insertDelegatedKey(u.trx, row);
  const signer = `approvers.any(user, user.id == '${row.id}')`;
  return issue(u, {
    operation: GRANT_POLICIES,
    accountId: wallet.id,
    targetId: row.id,
    content: body,
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) =>
      activityPayload(u.platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_CREATE_POLICIES',
        parameters: {
          policies: [
            {
              condition: `activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && wallet.id == '${wallet.id}'`,
              consensus: signer,
              effect: 'EFFECT_ALLOW',
              notes: `card ${row.card_id}, funding source ${row.funding_source_id}`,
              policyName: `${row.id} signs for ${wallet.id}`,
            },
            {
              condition: `activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && activity.params.userIds.all(id, id == '${row.id}')`,
              consensus: signer,
              effect: 'EFFECT_ALLOW',
              policyName: `${row.id} may revoke itself`,
            },
          ],
        },
      }),
    ttlMs: challengeTtlMs(u),
  });
}

/** The binding of `cardId` to `accountId`, recorded on its first use. */
async function fundingSource(u: Unit, cardId: string, accountId: string): Promise<CardFundingSourceRow> {
  const found = await findFundingSource(u.trx, u.platform.id, cardId, accountId);
  if (found) return found;
  await insertFundingSource(u.trx, {
    id: u.deps.ids.next('CardFundingSource'),
    platform_id: u.platform.id,
    card_id: cardId,
    account_id: accountId,
    created_at: u.at,
  });
  // Two racing first creates: both use the row that won.
  const won = await findFundingSource(u.trx, u.platform.id, cardId, accountId);
  if (!won) throw new Error(`card funding source (${cardId}, ${accountId}) missing after its insert`);
  return won;
}

/** Leg 3: the stamped policies challenge is consumed and the PENDING key becomes ACTIVE. */
async function activate(u: Unit, signature: WalletSignature, body: DelegatedKeyCreate, keyId: string): Promise<DelegatedKeyWire> {
  await verifyRetry(u, signature, { operation: GRANT_POLICIES, targetId: keyId, content: body });
  const key = await findDelegatedKey(u.trx, u.platform.id, keyId, { forUpdate: true });
  if (key?.status !== 'PENDING') throw new Error(`delegated key ${keyId} of a pending activation is ${key?.status ?? 'missing'}`);
  // One ACTIVE key per funding source: activations of one source serialise on its row.
  await findFundingSource(u.trx, u.platform.id, key.card_id, key.account_id, { forUpdate: true });
  const active = await findActiveKey(u.trx, u.platform.id, key.funding_source_id);
  if (active) throw errs.activeExists(active.id, active.funding_source_id);
  await setKeyStatus(u.trx, key.id, 'ACTIVE', u.at);
  return delegatedKeyToWire({ ...key, status: 'ACTIVE', updated_at: u.at });
}

// ── Reads ───────────────────────────────────────────────────────────────────────────────────────

/** GET /auth/delegated-keys: the keys matching every filter given (at least one), newest first. */
export async function listDelegatedKeys(
  ctx: AppContext,
  platform: PlatformRow,
  filter: DelegatedKeyListFilter,
): Promise<DelegatedKeyWire[]> {
  if (filter.accountId === undefined && filter.fundingSourceId === undefined) throw errs.filterRequired();
  return (await listKeyRows(ctx.db, platform.id, filter)).map(delegatedKeyToWire);
}

/** GET /auth/delegated-keys/{id}. */
export async function getDelegatedKey(ctx: AppContext, platform: PlatformRow, id: string): Promise<DelegatedKeyWire> {
  const row = await findDelegatedKey(ctx.db, platform.id, id);
  if (!row) throw errs.notFound(id);
  return delegatedKeyToWire(row);
}

// ── Revoke ──────────────────────────────────────────────────────────────────────────────────────

/** DELETE /auth/delegated-keys/{id}: an ACTIVE key becomes REVOKED and its private key is destroyed. */
export async function revokeDelegatedKey(u: Unit, id: string): Promise<void> {
  const key = await findDelegatedKey(u.trx, u.platform.id, id, { forUpdate: true });
  if (!key) throw errs.notFound(id);
  if (key.status !== 'ACTIVE') throw errs.notActive(id, key.status);
  await setKeyStatus(u.trx, id, 'REVOKED', u.at, { destroyPrivateKey: true });
}

// ── The key at work ─────────────────────────────────────────────────────────────────────────────

/**
 * Corridor's own stamp over `payload` by the ACTIVE key of the funding source `fundingSourceId`
 * (what card payments funded from an embedded wallet will sign with, issue #24), or undefined when
 * the source has no ACTIVE key. The stamp verifies as a wallet signature on quote executions from
 * the key's wallet (`isActiveDelegatedKey` in the signed-retry engine's check).
 */
export async function delegatedKeyStamp(u: Unit, fundingSourceId: string, payload: string): Promise<string | undefined> {
  const key = await findActiveKey(u.trx, u.platform.id, fundingSourceId);
  if (!key || key.private_key === null) return undefined;
  return createWalletStamp(u.app.secrets.open(key.private_key, privateKeyRef(key.id)), payload, key.public_key);
}
