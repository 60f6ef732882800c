/**
 * The errors of stablecoin issuance, by the live API's statuses and codes (facts-stablecoins §8).
 * Where the live document names no code of its own, the generic code of that status is used and
 * `details.reason` says which case it is:
 * - a link that is not usable: 400 STABLECOIN_PROVIDER_ACCOUNT_INVALID / _REVOKED; several ACTIVE
 *   links and none named: 400 _SELECTION_REQUIRED; an unknown link: 404 _NOT_FOUND;
 * - a stablecoin, operation or referenced account that is not the platform's: 404 REFERENCE_NOT_FOUND;
 * - a duplicate link or registration, a stablecoin not PROVISIONED, a burn beyond the burnable
 *   supply: 409 CONFLICT;
 * - the provider unavailable (sandbox magic amount): 503 SERVICE_UNAVAILABLE.
 */
import { errors } from '../../http/errors.ts';
import type { ProviderAccountRow } from './stablecoins.tables.ts';

export const stablecoinErrors = {
  linkNotFound: (id?: string) =>
    errors.coded(
      404,
      'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
      id === undefined
        ? 'No stablecoin provider account is linked: link one with POST /stablecoin-provider-accounts'
        : `Stablecoin provider account ${id} not found`,
    ),
  linkUnusable: (link: Pick<ProviderAccountRow, 'id' | 'status'>) =>
    link.status === 'REVOKED'
      ? errors.coded(400, 'STABLECOIN_PROVIDER_ACCOUNT_REVOKED', `The provider revoked stablecoin provider account link ${link.id}`, {
          stablecoinProviderAccountId: link.id,
          status: link.status,
        })
      : errors.coded(
          400,
          'STABLECOIN_PROVIDER_ACCOUNT_INVALID',
          `Stablecoin provider account link ${link.id} is not usable: the provider no longer accepts its credentials`,
          { stablecoinProviderAccountId: link.id, status: link.status },
        ),
  credentialsRefused: () =>
    errors.coded(400, 'STABLECOIN_PROVIDER_ACCOUNT_INVALID', 'The provider refused the API credentials', {
      errors: [{ field: 'apiClientId', message: 'the provider does not accept these credentials' }],
    }),
  selectionRequired: (ids: string[]) =>
    errors.coded(
      400,
      'STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED',
      'Several ACTIVE stablecoin provider account links exist: name one in stablecoinProviderAccountId',
      {
        stablecoinProviderAccountIds: ids,
        errors: [{ field: 'stablecoinProviderAccountId', message: 'is required: several ACTIVE links exist' }],
      },
    ),
  severalProviderAccounts: () =>
    errors.invalidField('providerAccountId', 'is required: these credentials expose several provider accounts'),
  linkExists: (id: string) =>
    errors.coded(409, 'CONFLICT', `This provider account is already linked and ACTIVE: ${id}`, {
      reason: 'PROVIDER_ACCOUNT_ALREADY_LINKED',
      stablecoinProviderAccountId: id,
    }),
  tokenCollides: (code: string) =>
    errors.invalidField(
      'providerTokenIdentifier',
      `is the currency code ${code}, which Corridor already moves: a stablecoin needs a symbol of its own`,
    ),
  alreadyRegistered: (id: string | undefined) =>
    errors.coded(409, 'CONFLICT', `This token is already registered on the platform${id ? `: ${id}` : ''}`, {
      reason: 'STABLECOIN_ALREADY_REGISTERED',
      ...(id ? { stablecoinId: id } : {}),
    }),
  stablecoinNotFound: (id: string) => errors.notFound('Stablecoin', id),
  operationNotFound: (id: string) => errors.notFound('Stablecoin operation', id),
  accountNotFound: (id: string) => errors.notFound('Account', id),
  notProvisioned: (id: string, status: string) =>
    errors.coded(409, 'CONFLICT', `Stablecoin ${id} is ${status}: mints and burns need issuanceStatus PROVISIONED`, {
      reason: 'STABLECOIN_NOT_PROVISIONED',
      issuanceStatus: status,
    }),
  amount: (message: string) => errors.invalidField('amount', message),
  reservedType: (field: 'fundingSource.type' | 'source.type', type: string) =>
    errors.invalidField(field, `${type} is reserved for a future flow and not supported yet`),
  burnExceedsSupply: (amount: number, burnable: number, supply: number) =>
    errors.coded(
      409,
      'CONFLICT',
      `Cannot burn ${amount}: at most ${burnable} of the outstanding supply ${supply} is not already being burnt`,
      {
        reason: 'BURN_EXCEEDS_SUPPLY',
        outstandingSupply: String(supply),
        burnable: String(burnable),
        errors: [{ field: 'amount', message: `exceeds the burnable supply (${burnable})` }],
      },
    ),
  supplyLimit: () => errors.invalidField('amount', `would take the supply beyond ${Number.MAX_SAFE_INTEGER}`),
  account: (field: string, message: string) => errors.invalidField(field, message),
  providerUnavailable: () =>
    errors.coded(503, 'SERVICE_UNAVAILABLE', 'The stablecoin provider is temporarily unavailable; nothing was created, retry later', {
      reason: 'PROVIDER_UNAVAILABLE',
    }),
};
