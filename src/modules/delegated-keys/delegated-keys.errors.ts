/**
 * The area's errors, by the live API's status for each case (facts-delegated-keys §7). The live
 * document names no code of its own for them: a 404 is the generic `REFERENCE_NOT_FOUND`, the
 * one-active-key rule `CONFLICT`, a revoke of a key that is not ACTIVE `INVALID_INPUT`.
 */
import { errors } from '../../http/errors.ts';
import type { DelegatedKeyStatus } from './delegated-keys.tables.ts';

export const delegatedKeyErrors = {
  notFound: (id: string) => errors.coded(404, 'REFERENCE_NOT_FOUND', `Delegated key ${id} not found`),
  /** The platform has no card with this id (another platform's cards included). */
  cardNotFound: (id: string) => errors.coded(404, 'REFERENCE_NOT_FOUND', `Card ${id} not found`),
  walletNotFound: (id: string) => errors.coded(404, 'REFERENCE_NOT_FOUND', `Internal account ${id} not found`),
  notAWallet: (id: string) =>
    errors.coded(400, 'INVALID_INPUT', `internalAccountId: ${id} is not an EMBEDDED_WALLET internal account`, {
      errors: [{ field: 'internalAccountId', message: 'must be an EMBEDDED_WALLET internal account' }],
    }),
  filterRequired: () =>
    errors.coded(400, 'INVALID_INPUT', 'Give accountId, fundingSourceId or both', {
      errors: [
        { field: 'accountId', message: 'is required when fundingSourceId is absent' },
        { field: 'fundingSourceId', message: 'is required when accountId is absent' },
      ],
    }),
  activeExists: (keyId: string, fundingSourceId: string) =>
    errors.coded(
      409,
      'CONFLICT',
      `Delegated key ${keyId} is already ACTIVE for card funding source ${fundingSourceId}; revoke it before creating another`,
      { delegatedKeyId: keyId, fundingSourceId },
    ),
  notActive: (id: string, status: DelegatedKeyStatus) =>
    errors.coded(400, 'INVALID_INPUT', `Delegated key ${id} is ${status}: only an ACTIVE key can be revoked`, { id, status }),
};
