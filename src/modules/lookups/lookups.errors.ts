/**
 * The errors of the lookups and catalogues, each a live status and code from the catalogue
 * (src/http/errors.ts), with the field it is about in `details.errors` where there is one.
 */
import { errors, type FieldError } from '../../http/errors.ts';

const field = (name: string, message: string): { errors: FieldError[] } => ({ errors: [{ field: name, message }] });

export const lookupErrors = {
  /** Neither sender identifier: the live API needs one of the two. */
  senderMissing: () =>
    errors.coded(
      400,
      'INVALID_INPUT',
      'Name the sender: customerId or senderUmaAddress is required',
      field('customerId', 'customerId or senderUmaAddress is required'),
    ),
  senderUmaMalformed: (address: string) =>
    errors.coded(400, 'INVALID_UMA_ADDRESS', `Not a UMA address: ${address}`, field('senderUmaAddress', 'must look like $name@domain')),
  /** `senderUmaAddress` names no customer of the platform (another platform's customers included). */
  senderUmaUnknown: (address: string) =>
    errors.coded(404, 'USER_NOT_FOUND', `No customer of this platform has the UMA address ${address}`, {
      senderUmaAddress: address,
    }),
  sendersDisagree: (customerId: string, address: string) =>
    errors.coded(
      400,
      'INVALID_INPUT',
      `senderUmaAddress ${address} is not the UMA address of customer ${customerId}`,
      field('senderUmaAddress', `is not the UMA address of customer ${customerId}`),
    ),

  /** An unknown lookup, another platform's, or one past its expiry (kept no longer than that). */
  lookupNotFound: (lookupId: string, expiredAt?: string) =>
    errors.coded(
      404,
      'LOOKUP_REQUEST_NOT_FOUND',
      expiredAt
        ? `Lookup ${lookupId} expired at ${expiredAt}: look the receiver up again`
        : `Lookup ${lookupId} not found: look the receiver up with GET /receiver/uma/{address} or /receiver/external-account/{id}`,
      expiredAt ? { lookupId, expiredAt } : { lookupId },
    ),
  lookupOtherReceiver: (lookupId: string, receiver: string) =>
    errors.coded(
      400,
      'INVALID_INPUT',
      `Lookup ${lookupId} was made for ${receiver}, not for this quote's destination`,
      field('lookupId', `was made for the receiver ${receiver}`),
    ),
  lookupOtherSender: (lookupId: string, customerId: string) =>
    errors.coded(
      400,
      'INVALID_INPUT',
      `Lookup ${lookupId} was made for the sender ${customerId}, not for this quote's sender`,
      field('lookupId', `was made for the sender customer ${customerId}`),
    ),
  payerDataMissing: (lookupId: string, missing: string[]) =>
    errors.coded(
      400,
      'MISSING_MANDATORY_USER_INFO',
      `The receiver of lookup ${lookupId} needs ${missing.join(', ')} about the payer: send them in senderCustomerInfo`,
      {
        errors: missing.map((name) => ({
          field: `senderCustomerInfo.${name}`,
          message: 'required by the receiver (requiredPayerDataFields)',
        })),
      },
    ),
  payerDataInvalid: (name: string, message: string) =>
    errors.coded(400, 'INVALID_INPUT', `senderCustomerInfo.${name} ${message}`, field(`senderCustomerInfo.${name}`, message)),

  /** The withdrawal's currency is not what the account holds, or not a crypto asset. */
  withdrawalCurrency: (message: string) => errors.coded(400, 'INVALID_CURRENCY', `currency: ${message}`, field('currency', message)),
  withdrawalField: (name: string, message: string) => errors.coded(400, 'INVALID_INPUT', `${name}: ${message}`, field(name, message)),
  feesExceedAmount: (totalFee: number) =>
    errors.coded(
      400,
      'AMOUNT_OUT_OF_RANGE',
      `The amount does not cover the withdrawal fee of ${totalFee}`,
      field('amount', `must be more than the total fee ${totalFee}`),
    ),
};
