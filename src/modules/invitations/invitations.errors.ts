/**
 * The errors of invitations, by the live API's codes. `details.status` names the state that refused
 * the request (as the live guide's error examples do), so a client can branch on the code alone or
 * show the state without a second read.
 */
import { errors } from '../../http/errors.ts';

export const invitationErrors = {
  /** No invitation of the caller's platform has this code (another platform's code included). */
  notFound: () => errors.coded(404, 'INVITATION_NOT_FOUND', 'Invitation not found'),
  alreadyClaimed: (inviteeUma: string | null) =>
    errors.coded(400, 'INVITATION_ALREADY_CLAIMED', 'This invitation has already been claimed', {
      status: 'CLAIMED',
      ...(inviteeUma !== null ? { inviteeUma } : {}),
    }),
  cancelled: () => errors.coded(400, 'INVITATION_CANCELLED', 'This invitation has been cancelled', { status: 'CANCELLED' }),
  /**
   * The live API names no code for an expired invitation (its guide shows a lowercase
   * `invitation_expired`, in no enum): `EXPIRED` is the catalogue's 400 for something past its date.
   */
  expired: (expiresAt: string) => errors.coded(400, 'EXPIRED', `This invitation expired at ${expiresAt}`, { status: 'EXPIRED', expiresAt }),
  notConfigured: () =>
    errors.coded(
      400,
      'INVITATIONS_NOT_CONFIGURED',
      'Invitations are not configured for this platform: set webhookEndpoint with PATCH /config first ' +
        '(INVITATION.CLAIMED is how the platform learns that an invitation was claimed)',
    ),
  invalidUmaAddress: (field: 'inviterUma' | 'inviteeUma', message: string) =>
    errors.coded(400, 'INVALID_UMA_ADDRESS', `${field}: ${message}`, { errors: [{ field, message }] }),
  /** The inviter must be a (not deleted) customer of the caller's platform. */
  inviterNotFound: () =>
    errors.coded(404, 'USER_NOT_FOUND', 'No customer of this platform has the UMA address inviterUma names', {
      errors: [{ field: 'inviterUma', message: 'is not the UMA address of a customer of this platform' }],
    }),
  selfClaim: () =>
    errors.invalidField('inviteeUma', "is the inviter's own UMA address: an invitation is claimed by someone other than its inviter"),
  expiryUnreadable: () => errors.invalidField('expiresAt', 'is not a representable time (a leap second such as 23:59:60 is not accepted)'),
  expiryNotInFuture: (now: string) => errors.invalidField('expiresAt', `must be later than now (${now} on the platform's clock)`),
  amountOutOfRange: (currency: string, min: number, max: number) =>
    errors.amountOutOfRange(`amountToSend must be between ${min} and ${max} (smallest units of ${currency})`, [
      {
        field: 'amountToSend',
        message: `must be between ${min} and ${max}: the platform's per-transaction bounds for ${currency}, which the payment will have to meet`,
      },
    ]),
};
