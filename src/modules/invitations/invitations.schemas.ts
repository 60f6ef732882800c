/** Wire schemas of UMA invitations (the live API's UmaInvitation, its create and claim requests). */
import { Type, type Static } from '@sinclair/typebox';
import { CurrencyAmountSchema, DateTime, MAX_AMOUNT, Obj } from '../../http/schemas.ts';

const EXAMPLE_CODE = '7k2m9q4x8r3t';

/** UMA addresses are at most 64 + 1 + 253 characters; anything longer is refused by the schema. */
const UmaAddressInput = (description: string, example: string) => Type.String({ maxLength: 320, description, examples: [example] });

export const InvitationStatusSchema = Type.Union(
  [Type.Literal('PENDING'), Type.Literal('CLAIMED'), Type.Literal('EXPIRED'), Type.Literal('CANCELLED')],
  { description: 'PENDING until claimed, cancelled or past expiresAt; CLAIMED, EXPIRED and CANCELLED are final' },
);

export const UmaInvitationSchema = Obj(
  {
    code: Type.String({
      description: 'The code the invitation is named by (in its URL and in the paths of this API)',
      examples: [EXAMPLE_CODE],
    }),
    createdAt: DateTime,
    claimedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it was claimed (CLAIMED only)' })),
    url: Type.String({ description: 'The link the invitee opens to claim it', examples: [`https://uma.me/i/${EXAMPLE_CODE}`] }),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it stops being claimable, if it was given one' })),
    inviterUma: Type.String({ description: 'The UMA address of the customer who invited', examples: ['$inviter@uma.domain'] }),
    inviteeUma: Type.Optional(
      Type.String({ description: 'The UMA address that claimed it (CLAIMED only)', examples: ['$invitee@uma.domain'] }),
    ),
    status: InvitationStatusSchema,
    firstName: Type.Optional(Type.String({ description: 'The first name given at creation, shown with the invitation' })),
    /**
     * What the inviter offers to send on claim, in the inviter's currency. Informational: nothing moves
     * on its own — after INVITATION.CLAIMED the inviting platform pays it with a sending-locked quote.
     */
    amountToSend: Type.Optional(CurrencyAmountSchema),
  },
  { title: 'UmaInvitation' },
);
export type UmaInvitationWire = Static<typeof UmaInvitationSchema>;

export const UmaInvitationCreateSchema = Obj(
  {
    inviterUma: UmaAddressInput('The UMA address of the platform’s customer who invites', '$inviter@uma.domain'),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A first name to show with the invitation' })),
    amountToSend: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AMOUNT,
        description: "An amount to offer the invitee, in the smallest unit of the inviter's currency (informational: see UmaInvitation)",
        examples: [12550],
      }),
    ),
    expiresAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the invitation stops being claimable (never, when absent)' }),
    ),
  },
  { title: 'UmaInvitationCreateRequest' },
);
export type UmaInvitationCreate = Static<typeof UmaInvitationCreateSchema>;

export const UmaInvitationClaimSchema = Obj(
  { inviteeUma: UmaAddressInput('The UMA address of the person claiming the invitation', '$invitee@uma.domain') },
  { title: 'UmaInvitationClaimRequest' },
);
export type UmaInvitationClaim = Static<typeof UmaInvitationClaimSchema>;

export const InvitationCodeParams = Obj({
  invitationCode: Type.String({ minLength: 1, maxLength: 200, description: 'The invitation’s code', examples: [EXAMPLE_CODE] }),
});

/** Cancellation takes no body (the live API declares none); an empty object is accepted too. */
export const NoBody = Obj({}, { title: 'EmptyRequest' });
