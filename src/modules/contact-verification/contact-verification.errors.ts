/**
 * The area's errors, by the live API's status for each case (facts-customers-extra §2.5,
 * facts-platform "PATCH /customers/{customerId} rules"). Where the live document names no code of
 * its own, the generic code of that status is used and `details.reason` says which case it is:
 * - a channel that needs no verification, or is VERIFIED already: 409 `CONFLICT`;
 * - a wrong, expired or void code: 400 `INVALID_INPUT` on the field `code`;
 * - the SMS_OTP twins of the EMAIL_OTP codes of a contact change (the live API defines codes for
 *   email only): 409 `CONFLICT` with reason `SMS_OTP_PHONE_ALREADY_EXISTS` /
 *   `SMS_OTP_CREDENTIAL_SET_CHANGED`.
 */
import { errors } from '../../http/errors.ts';
import type { ContactChannel } from './contact-verification.tables.ts';

/** The customer field holding each channel's contact. */
export const CONTACT_FIELD = { EMAIL: 'email', PHONE: 'phoneNumber' } as const satisfies Record<ContactChannel, string>;
const NAME = { EMAIL: 'email', PHONE: 'phone' } as const satisfies Record<ContactChannel, string>;

/** Why a confirm's code was refused. */
export type CodeRejection = 'NO_CODE_SENT' | 'CODE_EXPIRED' | 'CONTACT_CHANGED' | 'CODE_INVALID' | 'ATTEMPTS_EXHAUSTED';

export const contactVerificationErrors = {
  notRequired: (customerId: string, channel: ContactChannel) =>
    errors.coded(
      409,
      'CONFLICT',
      `Customer ${customerId} needs no ${NAME[channel]} verification (Corridor requires it for customers of sandbox platforms whose region is in the EEA)`,
      { reason: 'CONTACT_VERIFICATION_NOT_REQUIRED', channel: NAME[channel] },
    ),
  alreadyVerified: (customerId: string, channel: ContactChannel) =>
    errors.coded(409, 'CONFLICT', `The ${NAME[channel]} of customer ${customerId} is already verified`, {
      reason: 'ALREADY_VERIFIED',
      channel: NAME[channel],
    }),
  contactMissing: (customerId: string, channel: ContactChannel) =>
    errors.coded(
      400,
      'MISSING_MANDATORY_USER_INFO',
      `Customer ${customerId} has no ${CONTACT_FIELD[channel]} to send a code to; set it with PATCH /customers/{customerId} first`,
      { errors: [{ field: CONTACT_FIELD[channel], message: 'is required to verify it' }] },
    ),
  sendLimited: (customerId: string, channel: ContactChannel, max: number, retryAfterSeconds: number) =>
    errors.credentialRateLimited(
      `At most ${max} ${NAME[channel]} verification codes an hour for customer ${customerId}; retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    ),
  codeRejected: (reason: CodeRejection, channel: ContactChannel, attemptsRemaining?: number) => {
    const messages: Record<CodeRejection, string> = {
      NO_CODE_SENT: `no ${NAME[channel]} verification code is outstanding; send one first`,
      CODE_EXPIRED: 'the code has expired; send a new one',
      CONTACT_CHANGED: `the code was sent to a previous ${CONTACT_FIELD[channel]}; send a new one`,
      CODE_INVALID: 'the code is wrong',
      ATTEMPTS_EXHAUSTED: 'the code is wrong, and too many wrong codes were tried: it no longer works; send a new one',
    };
    return errors.coded(400, 'INVALID_INPUT', `code: ${messages[reason]}`, {
      reason,
      errors: [{ field: 'code', message: 'is invalid or expired' }],
      ...(attemptsRemaining !== undefined ? { attemptsRemaining } : {}),
    });
  },
  otpContactTaken: (type: 'EMAIL_OTP' | 'SMS_OTP') =>
    type === 'EMAIL_OTP'
      ? errors.coded(
          409,
          'EMAIL_OTP_EMAIL_ALREADY_EXISTS',
          'This email already signs in to another embedded wallet (an EMAIL_OTP credential)',
          {
            errors: [{ field: 'email', message: 'is used by an EMAIL_OTP credential of another wallet' }],
          },
        )
      : errors.coded(409, 'CONFLICT', 'This phone number already signs in to another embedded wallet (an SMS_OTP credential)', {
          reason: 'SMS_OTP_PHONE_ALREADY_EXISTS',
          errors: [{ field: 'phoneNumber', message: 'is used by an SMS_OTP credential of another wallet' }],
        }),
  credentialSetChanged: (type: 'EMAIL_OTP' | 'SMS_OTP') =>
    type === 'EMAIL_OTP'
      ? errors.coded(
          409,
          'EMAIL_OTP_CREDENTIAL_SET_CHANGED',
          "The customer's EMAIL_OTP credentials changed since the challenge was issued; send the request again for a new challenge",
        )
      : errors.coded(
          409,
          'CONFLICT',
          "The customer's SMS_OTP credentials changed since the challenge was issued; send the request again for a new challenge",
          { reason: 'SMS_OTP_CREDENTIAL_SET_CHANGED' },
        ),
};
