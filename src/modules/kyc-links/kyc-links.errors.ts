/** The errors of KYC links, on the catalogue's codes (src/http/errors.ts). */
import { errors } from '../../http/errors.ts';

export const kycLinkErrors = {
  /** `redirectUri` is not a URL the hosted page may send a browser to. */
  badRedirectUri: (message: string) =>
    errors.coded(400, 'INVALID_INPUT', `redirectUri: ${message}`, { errors: [{ field: 'redirectUri', message }] }),
  /**
   * The customer must verify its contact channels first (the live API's 409 for this operation;
   * `channels` are the wire keys of `contactVerification` still PENDING).
   */
  contactVerificationIncomplete: (customerId: string, channels: ('email' | 'phone')[]) =>
    errors.coded(
      409,
      'CONFLICT',
      `Customer ${customerId} must verify its ${channels.join(' and ')} first (POST /customers/{customerId}/verify-email and verify-phone)`,
      { reason: 'CONTACT_VERIFICATION_INCOMPLETE', channels },
    ),
  /** The hosted form sent a field it does not have, a field twice, or a value it does not offer. */
  badFormField: (field: string, message: string) =>
    errors.coded(400, 'INVALID_INPUT', `${field}: ${message}`, { errors: [{ field, message }] }),
  /** The hosted form was not sent as a form. */
  notAForm: () => errors.coded(400, 'INVALID_INPUT', 'Send the form as application/x-www-form-urlencoded'),
  /** Another request used the link between this one's read and its write (the unit rolls back). */
  usedMeanwhile: () => errors.coded(409, 'CONFLICT', 'This verification link was used by another request'),
};
