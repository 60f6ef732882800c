/** Wire schemas of contact verification: the customer's `contactVerification` and the confirm request. */
import { Type, type Static } from '@sinclair/typebox';
import { Obj } from '../../http/schemas.ts';

export const ContactVerificationStatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('VERIFIED')], {
  title: 'ContactVerificationStatus',
  description: 'PENDING: verification is required and not done yet (or the contact changed since); VERIFIED: confirmed with a code',
});
export type ContactVerificationStatus = Static<typeof ContactVerificationStatusSchema>;

/** Read-only on the customer; present only when the customer's contact details must be verified. */
export const ContactVerificationSchema = Obj(
  {
    email: Type.Optional(ContactVerificationStatusSchema),
    phone: Type.Optional(ContactVerificationStatusSchema),
  },
  {
    title: 'ContactVerification',
    description:
      'Each channel the customer must verify before KYC, and its state. Absent when no verification is required ' +
      '(Corridor requires both channels for customers of a sandbox platform whose region is in the EEA).',
  },
);
export type ContactVerificationWire = Static<typeof ContactVerificationSchema>;

export const ContactVerificationConfirmSchema = Obj(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The one-time code sent by email or SMS; on sandbox platforms it is always 123456',
      examples: ['123456'],
    }),
  },
  { title: 'ContactVerificationConfirmRequest' },
);
export type ContactVerificationConfirm = Static<typeof ContactVerificationConfirmSchema>;
