/**
 * The webhook event catalogue: the one source of truth for which events exist, which webhook (the
 * live API's `webhooks` key and operationId) carries each, and the schema of its `data`. The
 * outbox only accepts these types (`enqueueEvent` takes a `WebhookType`), and the served OpenAPI
 * document's `webhooks` section is generated from here (`openApiWebhooks`).
 *
 * Every type the live API lists for the areas Corridor has built is here, even those no flow emits
 * yet, so receivers can be written against the full list. `data` reuses the route response schemas
 * (the event carries the resource as the matching GET returns it); for payments it is our
 * Transaction schema narrowed here the way the live API's IncomingTransaction / OutgoingTransaction
 * narrow theirs: `type`, the outgoing `status` values and each side's `failureReason` values (not
 * `direction`, which the live API keeps independent of `type`: an ACH pull is INCOMING + DEBIT).
 *
 * Left out, because its area is not built: `bulk-upload` (BULK_UPLOAD.COMPLETED,
 * BULK_UPLOAD.FAILED). The card webhooks (CARD.STATE_CHANGE, CARD.FUNDING_SOURCE_CHANGE and
 * CARD_TRANSACTION.*, issue #24) carry the Card and the CardTransaction as the cards area returns
 * them (src/modules/cards/, docs/cards.md).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Obj } from '../http/schemas.ts';
import { AgentActionSchema } from '../modules/agents/agents.schemas.ts';
import { CustomerInfoFieldName } from '../modules/config/config.schemas.ts';
import { CustomerSchema } from '../modules/customers/customers.schemas.ts';
import { ExternalAccountSchema } from '../modules/external-accounts/external-accounts.schemas.ts';
import { InternalAccountSchema } from '../modules/internal-accounts/internal-accounts.schemas.ts';
import { VerificationSchema } from '../modules/kyc/verifications.schemas.ts';
import { UmaInvitationSchema } from '../modules/invitations/invitations.schemas.ts';
import { TransactionSchema } from '../modules/payments/payments.schemas.ts';
import { BulkImportJobSchema } from '../modules/bulk-import/bulk-import.schemas.ts';
import { CardSchema, CardTransactionSchema } from '../modules/cards/cards.schemas.ts';

/** A string enum as `{type: string, enum}` (what the live document uses for event types). */
const StrEnum = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

// ---------------------------------------------------------------------------------------------
// Payment data: the Transaction schema narrowed to the live API's incoming and outgoing shapes.

export const INCOMING_FAILURE_REASONS = [
  'LNURLP_FAILED',
  'PAY_REQUEST_FAILED',
  'PAYMENT_APPROVAL_WEBHOOK_ERROR',
  'PAYMENT_APPROVAL_TIMED_OUT',
  'OFFRAMP_FAILED',
  'MISSING_MANDATORY_PAYEE_DATA',
  'QUOTE_EXPIRED',
  'QUOTE_EXECUTION_FAILED',
  'COMPLIANCE_REJECTED',
  'COLLECTION_FAILED',
] as const;
const OUTGOING_FAILURE_REASONS = [
  'QUOTE_EXPIRED',
  'QUOTE_RATE_UNAVAILABLE',
  'QUOTE_EXECUTION_FAILED',
  'FUNDING_AMOUNT_MISMATCH',
  'SCA_NOT_COMPLETED',
  'PAYOUT_RETURNED',
  'LIMIT_EXCEEDED',
  'ACCOUNT_CANNOT_RECEIVE',
  'ACCOUNT_INVALID',
  'COMPLIANCE_REJECTED',
  'LIGHTNING_PAYMENT_FAILED',
  'COUNTERPARTY_POST_TX_FAILED',
] as const;
const OUTGOING_STATUSES = ['PENDING', 'PENDING_AUTHORIZATION', 'EXPIRED', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;

const TransactionFields = TransactionSchema.properties;

export const IncomingPaymentWebhookDataSchema = Obj(
  {
    ...TransactionFields,
    type: Type.Literal('INCOMING'),
    failureReason: Type.Optional(StrEnum(INCOMING_FAILURE_REASONS)),
    requestedReceiverCustomerInfoFields: Type.Optional(
      Type.Array(Obj({ name: CustomerInfoFieldName, mandatory: Type.Boolean() }, { title: 'CounterpartyFieldDefinition' }), {
        description:
          "Information about the recipient the sender's VASP asks for (beyond what Corridor already holds); supply it in the 200 response's receiverCustomerInfo when approving",
      }),
    ),
  },
  { title: 'IncomingPaymentWebhookData', description: 'The incoming transaction as GET /transactions/{id} returns it' },
);

export const OutgoingPaymentWebhookDataSchema = Obj(
  {
    ...TransactionFields,
    type: Type.Literal('OUTGOING'),
    status: StrEnum(OUTGOING_STATUSES),
    failureReason: Type.Optional(StrEnum(OUTGOING_FAILURE_REASONS)),
  },
  { title: 'OutgoingTransaction', description: 'The outgoing transaction as GET /transactions/{id} returns it' },
);

/** TEST carries no resource: `data` is always `{}`. */
export const TestWebhookDataSchema = Obj({}, { title: 'TestWebhookData', description: 'Always empty' });

// ---------------------------------------------------------------------------------------------
// The catalogue

interface WebhookDefinition<T extends string> {
  /** The live API's `webhooks` key. */
  key: string;
  operationId: string;
  /** Title of the envelope schema (the live API's component name). */
  title: string;
  summary: string;
  description: string;
  types: readonly T[];
  data: TSchema;
  /** INCOMING_PAYMENT.PENDING is an approval request: the receiver's reply decides (200/202/403/422). */
  approval?: boolean;
}

const define = <const T extends string>(d: WebhookDefinition<T>): WebhookDefinition<T> => d;

export const WEBHOOKS = {
  incomingPayment: define({
    key: 'incoming-payment',
    operationId: 'incomingPaymentWebhook',
    title: 'IncomingPaymentWebhook',
    summary: 'Incoming payment webhook and approval mechanism',
    description:
      'Sent when a customer receives a payment, at each status change. For an incoming UMA payment, ' +
      'INCOMING_PAYMENT.PENDING is an approval request: reply 200 to approve, 202 to decide later with ' +
      'POST /transactions/{id}/approve or /reject within 5 seconds, 403 to reject, 422 to ask for more ' +
      'counterparty information. Every other incoming event, and PENDING for a bank-rail transfer-in, is informational.',
    types: [
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.COMPLETED',
      'INCOMING_PAYMENT.FAILED',
      'INCOMING_PAYMENT.REFUND_PENDING',
      'INCOMING_PAYMENT.REFUND_COMPLETED',
      'INCOMING_PAYMENT.REFUND_FAILED',
    ],
    data: IncomingPaymentWebhookDataSchema,
    approval: true,
  }),
  outgoingPayment: define({
    key: 'outgoing-payment',
    operationId: 'outgoingPaymentWebhook',
    title: 'OutgoingPaymentWebhook',
    summary: 'Outgoing payment status webhook',
    description: "Sent when an outgoing payment's status changes, and for its refund after a failure or a return. Informational.",
    types: [
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PENDING_AUTHORIZATION',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.EXPIRED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
      'OUTGOING_PAYMENT.REFUND_FAILED',
    ],
    data: OutgoingPaymentWebhookDataSchema,
  }),
  testWebhook: define({
    key: 'test-webhook',
    operationId: 'testWebhook',
    title: 'TestWebhookRequest',
    summary: 'Test webhook for integration verification',
    description: 'Sent once when webhookEndpoint is set or changed, and by POST /sandbox/webhooks/test. Never retried.',
    types: ['TEST'],
    data: TestWebhookDataSchema,
  }),
  customerUpdate: define({
    key: 'customer-update',
    operationId: 'customerStatusWebhook',
    title: 'CustomerWebhook',
    summary: 'Customer status change',
    description: 'Sent when a customer enters PENDING, APPROVED or REJECTED KYC (individuals) or KYB (businesses) status.',
    types: [
      'CUSTOMER.KYC_APPROVED',
      'CUSTOMER.KYC_REJECTED',
      'CUSTOMER.KYC_PENDING',
      'CUSTOMER.KYB_APPROVED',
      'CUSTOMER.KYB_REJECTED',
      'CUSTOMER.KYB_PENDING',
    ],
    data: CustomerSchema,
  }),
  internalAccountStatus: define({
    key: 'internal-account-status',
    operationId: 'internalAccountStatusWebhook',
    title: 'InternalAccountStatusWebhook',
    summary: 'Internal account status webhook',
    description:
      'INTERNAL_ACCOUNT.BALANCE_UPDATED: the balance changed (the account carries an empty fundingPaymentInstructions); ' +
      'INTERNAL_ACCOUNT.STATUS_UPDATED: the status changed; INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED: fundingPaymentInstructions gained or lost entries.',
    types: ['INTERNAL_ACCOUNT.BALANCE_UPDATED', 'INTERNAL_ACCOUNT.STATUS_UPDATED', 'INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED'],
    data: InternalAccountSchema,
  }),
  externalAccountStatus: define({
    key: 'external-account-status',
    operationId: 'externalAccountStatusWebhook',
    title: 'ExternalAccountStatusWebhook',
    summary: 'External account status webhook',
    description:
      "Sent whenever an external account's status changes: ownership verification (to ACTIVE or UNVERIFIED, and back to " +
      'PENDING_OWNERSHIP_VERIFICATION on a new challenge) and deletion (to INACTIVE).',
    types: ['EXTERNAL_ACCOUNT.STATUS_UPDATED'],
    data: ExternalAccountSchema,
  }),
  bulkUpload: define({
    key: 'bulk-upload',
    operationId: 'bulkUploadWebhook',
    title: 'BulkUploadWebhook',
    summary: 'Bulk customer import finished',
    description:
      'Sent when a bulk customer import (POST /customers/bulk/csv) has handled every row: BULK_UPLOAD.COMPLETED, or ' +
      'BULK_UPLOAD.FAILED when no row could be imported. The data is the job as GET /customers/bulk/jobs/{jobId} returns it.',
    types: ['BULK_UPLOAD.COMPLETED', 'BULK_UPLOAD.FAILED'],
    data: BulkImportJobSchema,
  }),
  verificationUpdate: define({
    key: 'verification-update',
    operationId: 'verificationStatusWebhook',
    title: 'VerificationWebhook',
    summary: 'Verification status change',
    description:
      "Sent when a KYC/KYB verification is created or changes status. VERIFICATION.READY_FOR_VERIFICATION is in the live API's " +
      'WebhookType enum (not in its verification webhook) and is listed here so every type has a webhook.',
    types: [
      'VERIFICATION.APPROVED',
      'VERIFICATION.REJECTED',
      'VERIFICATION.RESOLVE_ERRORS',
      'VERIFICATION.IN_PROGRESS',
      'VERIFICATION.PENDING_MANUAL_REVIEW',
      'VERIFICATION.READY_FOR_VERIFICATION',
    ],
    data: VerificationSchema,
  }),
  invitationClaimed: define({
    key: 'invitation-claimed',
    operationId: 'invitationClaimedWebhook',
    title: 'InvitationClaimedWebhook',
    summary: 'Invitation claimed webhook',
    description:
      'Sent to the platform that created an invitation when it is claimed; data is the invitation (CLAIMED, with inviteeUma ' +
      'and claimedAt). For a pay-by-link invitation this is the moment to pay amountToSend with a sending-locked quote.',
    types: ['INVITATION.CLAIMED'],
    data: UmaInvitationSchema,
  }),
  agentAction: define({
    key: 'agent-action',
    operationId: 'agentActionWebhook',
    title: 'AgentActionWebhook',
    summary: 'Agent action pending approval webhook',
    description:
      'Sent when an agent submits an action its policy sends for approval. The data is the full AgentAction (with its quote or ' +
      'transfer details); approve or reject it with POST /agents/{agentId}/actions/{actionId}/approve or /reject.',
    types: ['AGENT_ACTION.PENDING_APPROVAL'],
    data: AgentActionSchema,
  }),
  cardStateChange: define({
    key: 'card-state-change',
    operationId: 'cardStateChangeWebhook',
    title: 'CardStateChangeWebhook',
    summary: 'Card state change',
    description:
      "Sent when a card's state changes: PROCESSING → ACTIVE (provisioned) or → CLOSED with stateReason ISSUER_REJECTED, " +
      'and every later ACTIVE ⇄ FROZEN and → CLOSED. The data is the card after the change.',
    types: ['CARD.STATE_CHANGE'],
    data: CardSchema,
  }),
  cardFundingSourceChange: define({
    key: 'card-funding-source-change',
    operationId: 'cardFundingSourceChangeWebhook',
    title: 'CardFundingSourceChangeWebhook',
    summary: 'Card funding source change',
    description: 'Sent for every PATCH /cards/{id} that sets fundingSources; the data is the card with its new ordered fundingSources.',
    types: ['CARD.FUNDING_SOURCE_CHANGE'],
    data: CardSchema,
  }),
  cardTransaction: define({
    key: 'card-transaction',
    operationId: 'cardTransactionWebhook',
    title: 'CardTransactionWebhook',
    summary: 'Card transaction webhook',
    description:
      'Sent whenever a card transaction changes (an authorization approved, a clearing, a post-hoc pull, a return, an advice, ' +
      'a pull confirmed, a hold released): the type is CARD_TRANSACTION.<its status after the change>, the data the transaction ' +
      'as GET /transactions/{id} returns it. A declined authorization makes no transaction and no webhook.',
    types: [
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.PARTIALLY_SETTLED',
      'CARD_TRANSACTION.SETTLED',
      'CARD_TRANSACTION.REFUNDED',
      'CARD_TRANSACTION.EXCEPTION',
    ],
    data: CardTransactionSchema,
  }),
};

type Catalogue = typeof WEBHOOKS;

/** Every event type Corridor may emit, `OBJECT.EVENT`. */
export type WebhookType = Catalogue[keyof Catalogue]['types'][number];

export const WEBHOOK_TYPES: readonly WebhookType[] = Object.values(WEBHOOKS).flatMap((w) => w.types as readonly WebhookType[]);

const TYPES = new Set<string>(WEBHOOK_TYPES);

export function isWebhookType(s: string): s is WebhookType {
  return TYPES.has(s);
}

/** The event of a payment status change: `OUTGOING_PAYMENT.<suffix>` or `INCOMING_PAYMENT.<suffix>`. */
export type PaymentEventSuffix = Catalogue['outgoingPayment']['types'][number] extends `OUTGOING_PAYMENT.${infer S}` ? S : never;

/**
 * The payment event type for a transaction of type `INCOMING`/`OUTGOING`. Outgoing payments have
 * suffixes incoming ones lack (PROCESSING, EXPIRED, PENDING_AUTHORIZATION): emitting one for an
 * incoming payment is a programming error, caught here rather than sent as an unknown type.
 */
export function paymentEventType(transactionType: string, suffix: PaymentEventSuffix): WebhookType {
  const type = `${transactionType === 'INCOMING' ? 'INCOMING_PAYMENT' : 'OUTGOING_PAYMENT'}.${suffix}`;
  if (!isWebhookType(type)) throw new Error(`no webhook event ${type}`);
  return type;
}

// ---------------------------------------------------------------------------------------------
// OpenAPI: the `webhooks` section and its security scheme

export const WEBHOOK_SIGNATURE_SCHEME = {
  type: 'apiKey',
  in: 'header',
  name: 'X-Grid-Signature',
  description:
    'ECDSA P-256 / SHA-256 signature of the exact request body bytes, as {"v":"1","s":"<base64 DER signature>"} ' +
    '(also sent as X-Service-Signature). Verify it with the SPKI PEM from GET /webhooks/signing-key and reject the request if it does not verify.',
} as const;

/** The `{id, type, timestamp, data}` envelope of one webhook. */
export function envelopeSchema(w: WebhookDefinition<string>): TSchema {
  return Obj(
    {
      id: Type.String({
        pattern: '^Webhook:[0-9a-f-]{36}$',
        description: 'Unique per event; receivers deduplicate on it (reply 409 to a duplicate)',
        examples: ['Webhook:019542f5-b3e7-7d02-8000-000000000007'],
      }),
      type: StrEnum(w.types, { description: 'Event type, OBJECT.EVENT; route on it alone' }),
      timestamp: Type.String({ format: 'date-time', description: 'When this webhook was sent, on the platform clock' }),
      data: w.data,
    },
    { title: w.title },
  );
}

/** A receiver's error reply (the shape the live API documents; Corridor reads only the status). */
const ReceiverErrorFields = {
  code: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
};

/** Structural types of the generated section (schemas are plain JSON Schema objects). */
interface MediaType {
  schema: object;
}
interface WebhookResponse {
  description: string;
  content?: Record<string, MediaType>;
}
interface WebhookOperation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  security: Record<string, string[]>[];
  requestBody: { required: boolean; content: Record<string, MediaType> };
  responses: Record<string, WebhookResponse>;
}
export type OpenApiWebhooks = Record<string, { post: WebhookOperation }>;

function responses(w: WebhookDefinition<string>): Record<string, WebhookResponse> {
  const common = {
    '400': { description: 'Bad request: retried with backoff (except TEST and INCOMING_PAYMENT.PENDING, which are never retried)' },
    '401': { description: 'Signature check failed: retried like any other non-2xx reply' },
    '409': { description: 'This webhook id was already processed: not retried' },
  };
  if (!w.approval) return { '200': { description: 'Received (any 2xx counts as delivered)' }, ...common };
  const json = (schema: TSchema): Record<string, MediaType> => ({ 'application/json': { schema } });
  return {
    '200': {
      description:
        'Received. For INCOMING_PAYMENT.PENDING of an incoming UMA payment: approved. When requestedReceiverCustomerInfoFields ' +
        'listed mandatory fields, the body must carry them in receiverCustomerInfo.',
      content: json(
        Type.Object(
          {
            receiverCustomerInfo: Type.Optional(
              Type.Object({}, { additionalProperties: true, description: 'The requested recipient fields, by CustomerInfoFieldName' }),
            ),
          },
          { title: 'IncomingPaymentWebhookResponse' },
        ),
      ),
    },
    '202': {
      description:
        'Will decide asynchronously: call POST /transactions/{id}/approve or /reject within 5 seconds, or the payment fails ' +
        'with PAYMENT_APPROVAL_TIMED_OUT. For informational events a 202 counts as a 200.',
    },
    '403': {
      description: 'Payment rejected (INCOMING_PAYMENT.PENDING of an incoming UMA payment only)',
      content: json(
        Type.Object(
          { ...ReceiverErrorFields, reason: Type.Optional(Type.String({ examples: ['RESTRICTED_JURISDICTION'] })) },
          { title: 'IncomingPaymentWebhookForbiddenResponse' },
        ),
      ),
    },
    '422': {
      description: 'More counterparty information is required (INCOMING_PAYMENT.PENDING of an incoming UMA payment only)',
      content: json(
        Type.Object(
          {
            ...ReceiverErrorFields,
            requiredFields: Type.Optional(Type.Array(Type.String(), { examples: [['TAX_ID', 'REGISTRATION_NUMBER']] })),
          },
          { title: 'IncomingPaymentWebhookUnprocessableResponse' },
        ),
      ),
    },
    ...common,
  };
}

/**
 * The OpenAPI 3.1 `webhooks` section: one Path Item per webhook, keyed like the live API, whose
 * `post` takes the signed envelope. Plain JSON (TypeBox's symbol keys dropped), so nothing that
 * renders the document can touch the schemas the server validates with.
 */
export function openApiWebhooks(): OpenApiWebhooks {
  const section: OpenApiWebhooks = {};
  for (const w of Object.values(WEBHOOKS) as WebhookDefinition<string>[]) {
    section[w.key] = {
      post: {
        operationId: w.operationId,
        tags: ['Webhooks'],
        summary: w.summary,
        description: `${w.description}\n\nEvent types: ${w.types.join(', ')}.`,
        security: [{ WebhookSignature: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: envelopeSchema(w) } } },
        responses: responses(w),
      },
    };
  }
  return JSON.parse(JSON.stringify(section)) as OpenApiWebhooks;
}
