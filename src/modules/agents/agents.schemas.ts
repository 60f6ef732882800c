/** Wire schemas for agents: policy, usage, device codes, actions, and the management requests. */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, CurrencyCode, DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';
import { QuoteSchema, TransactionSchema } from '../payments/payments.schemas.ts';

const StrEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

export const AGENT_PERMISSIONS = [
  'VIEW_TRANSACTIONS',
  'CREATE_TRANSFERS',
  'CREATE_QUOTES',
  'EXECUTE_QUOTES',
  'MANAGE_EXTERNAL_ACCOUNTS',
] as const;
export type AgentPermission = (typeof AGENT_PERMISSIONS)[number];

export const AgentPermissionSchema = StrEnum(
  AGENT_PERMISSIONS,
  'VIEW_TRANSACTIONS: transactions and account balances; CREATE_TRANSFERS: transfer-in/out; CREATE_QUOTES; EXECUTE_QUOTES; MANAGE_EXTERNAL_ACCOUNTS',
);
export const ExecutionModeSchema = StrEnum(
  ['AUTO', 'APPROVAL_REQUIRED'] as const,
  'AUTO executes at once; APPROVAL_REQUIRED waits for the platform',
);

const AgentId = IdString('Agent:019542f5-b3e7-7d02-8000-000000000001');
const InternalAccountId = IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001');
const NullableAmount = (description: string) => Type.Union([Amount(description), Type.Null()]);

export const SpendingLimitsSchema = Obj(
  {
    currency: CurrencyCode,
    perTransactionLimit: Amount('Largest single movement, in the smallest unit of currency'),
    dailyLimit: Type.Optional(NullableAmount('Total per platform-clock UTC day; null: no limit')),
    dailyTransactionLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Movements per UTC day' })),
    monthlyLimit: Type.Optional(NullableAmount('Total per UTC calendar month; null: no limit')),
  },
  {
    title: 'AgentSpendingLimits',
    description: 'Amounts in other currencies are converted at the sandbox rate of the moment they are checked',
  },
);

export const SpendingLimitsUpdateSchema = Obj(
  {
    currency: Type.Optional(CurrencyCode),
    perTransactionLimit: Type.Optional(Amount('Largest single movement')),
    dailyLimit: Type.Optional(NullableAmount('null removes the daily limit')),
    dailyTransactionLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    monthlyLimit: Type.Optional(NullableAmount('null removes the monthly limit')),
  },
  {
    title: 'AgentSpendingLimitsUpdate',
    description: 'Changing currency recasts the limits not given here (and the usage) at the current rate',
  },
);

export const AccountRuleSchema = Obj(
  {
    accountId: InternalAccountId,
    executionMode: Type.Optional(ExecutionModeSchema),
    perTransactionLimit: Type.Optional(NullableAmount("Per-movement limit in the account's currency; null inherits the spending limits")),
  },
  { title: 'AgentAccountRule' },
);

export const AccountRestrictionsSchema = Obj(
  {
    allowedAccountIds: Type.Optional(
      Type.Union([Type.Array(InternalAccountId, { maxItems: 100, uniqueItems: true }), Type.Null()], {
        description: 'null: every account of the customer',
      }),
    ),
    accountRules: Type.Optional(Type.Array(AccountRuleSchema, { maxItems: 100 })),
  },
  { title: 'AgentAccountRestrictions' },
);

export const ApprovalThresholdsSchema = Obj(
  {
    currency: Type.Optional(CurrencyCode),
    amount: Type.Optional(NullableAmount('Movements above this need approval even in AUTO mode; null: no threshold')),
  },
  { title: 'AgentApprovalThresholds' },
);

export const PolicySchema = Obj(
  {
    permissions: Type.Array(AgentPermissionSchema, { maxItems: AGENT_PERMISSIONS.length, uniqueItems: true }),
    defaultExecutionMode: ExecutionModeSchema,
    spendingLimits: SpendingLimitsSchema,
    accountRestrictions: Type.Optional(AccountRestrictionsSchema),
    approvalThresholds: Type.Optional(ApprovalThresholdsSchema),
  },
  { title: 'AgentPolicy' },
);
export type Policy = Static<typeof PolicySchema>;

export const PolicyUpdateSchema = Obj(
  {
    permissions: Type.Optional(Type.Array(AgentPermissionSchema, { maxItems: AGENT_PERMISSIONS.length, uniqueItems: true })),
    defaultExecutionMode: Type.Optional(ExecutionModeSchema),
    spendingLimits: Type.Optional(SpendingLimitsUpdateSchema),
    accountRestrictions: Type.Optional(AccountRestrictionsSchema),
    approvalThresholds: Type.Optional(ApprovalThresholdsSchema),
  },
  { title: 'AgentPolicyUpdateRequest', minProperties: 1, description: 'Omitted fields keep their values; permissions replaces the list' },
);
export type PolicyUpdate = Static<typeof PolicyUpdateSchema>;

export const UsageSchema = Obj(
  {
    dailyTransactionCount: Type.Integer({ minimum: 0 }),
    dailySpend: Type.Integer({ minimum: 0, description: 'In spendingLimits.currency' }),
    dailyResetDate: Type.Optional(Type.String({ format: 'date', description: 'UTC day (platform clock) the daily counters reset' })),
    monthlySpend: Type.Integer({ minimum: 0 }),
    monthlyResetMonth: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'YYYY-MM the monthly counter resets' })),
  },
  { title: 'AgentUsage' },
);
export type Usage = Static<typeof UsageSchema>;

export const AgentSchema = Obj(
  {
    id: Type.String({ examples: ['Agent:019542f5-b3e7-7d02-8000-000000000001'] }),
    name: Type.String(),
    customerId: Type.String(),
    isPaused: Type.Boolean(),
    isConnected: Type.Boolean(),
    policy: PolicySchema,
    usage: UsageSchema,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Agent' },
);
export type AgentWire = Static<typeof AgentSchema>;

export const AgentNameSchema = Type.String({ minLength: 1, maxLength: 255, examples: ['Payroll Automation Agent'] });

export const AgentCreateSchema = Obj(
  { name: AgentNameSchema, customerId: IdString('Customer:019542f5-b3e7-7d02-8000-000000000001'), policy: PolicySchema },
  { title: 'AgentCreateRequest' },
);
export type AgentCreate = Static<typeof AgentCreateSchema>;

export const AgentUpdateSchema = Obj(
  { name: Type.Optional(AgentNameSchema), isPaused: Type.Optional(Type.Boolean()) },
  { title: 'AgentUpdateRequest', minProperties: 1 },
);

export const DeviceCodeSchema = Obj(
  {
    code: Type.String({ examples: ['AGENT-X7K9-M2P4-Q8RT'] }),
    agentId: Type.String(),
    expiresAt: DateTime,
    redeemed: Type.Boolean(),
  },
  { title: 'AgentDeviceCode' },
);

export const AgentCreateResponseSchema = Obj({ agent: AgentSchema, deviceCode: DeviceCodeSchema }, { title: 'AgentCreateResponse' });
export const DeviceCodeStatusSchema = Obj({ code: Type.String(), redeemed: Type.Boolean() }, { title: 'AgentDeviceCodeStatusResponse' });
export const RedeemResponseSchema = Obj(
  {
    agentId: Type.String(),
    agentName: Type.String(),
    accessToken: Type.String({ description: 'Send as `Authorization: Bearer <accessToken>`; shown only here, once' }),
    policy: PolicySchema,
  },
  { title: 'AgentDeviceCodeRedeemResponse' },
);

export const ACTION_STATUSES = ['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];
export type ActionType = 'EXECUTE_QUOTE' | 'TRANSFER_OUT' | 'TRANSFER_IN';

export const TransferDetailsSchema = Obj(
  {
    amount: Type.Integer({ minimum: 0 }),
    currency: Type.String(),
    sourceAccountId: Type.String(),
    destinationAccountId: Type.String(),
  },
  { title: 'AgentTransferDetails' },
);
export type TransferDetails = Static<typeof TransferDetailsSchema>;

export const AgentActionSchema = Obj(
  {
    id: Type.String({ examples: ['AgentAction:019542f5-b3e7-7d02-8000-000000000001'] }),
    agentId: Type.String(),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    status: StrEnum(ACTION_STATUSES),
    type: StrEnum(['EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN'] as const),
    quote: Type.Optional(QuoteSchema),
    transferDetails: Type.Optional(TransferDetailsSchema),
    transaction: Type.Optional(TransactionSchema),
    rejectionReason: Type.Optional(Type.String()),
    failureReason: Type.Optional(Type.String({ description: 'Corridor extension: why a FAILED action did not execute' })),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'AgentAction' },
);
export type AgentActionWire = Static<typeof AgentActionSchema>;

export const AgentListSchema = Page(AgentSchema, 'AgentListResponse');
export const AgentActionListSchema = Page(AgentActionSchema, 'AgentActionListResponse');

export const AgentListQuery = Obj({
  customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
  isPaused: Type.Optional(Type.Boolean()),
  isConnected: Type.Optional(Type.Boolean()),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  updatedAfter: Type.Optional(DateTime),
  updatedBefore: Type.Optional(DateTime),
  ...PageQueryFields,
});
export type AgentListQueryT = Static<typeof AgentListQuery>;

export const ApprovalListQuery = Obj({
  agentId: Type.Optional(AgentId),
  customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  sortOrder: Type.Optional(StrEnum(['asc', 'desc'] as const)),
  ...PageQueryFields,
});
export type ApprovalListQueryT = Static<typeof ApprovalListQuery>;

export const ActionListQuery = Obj({ status: Type.Optional(StrEnum(ACTION_STATUSES)), ...PageQueryFields });

export const AgentIdParams = Obj({ agentId: AgentId });
export const ActionParams = Obj({ agentId: AgentId, actionId: IdString('AgentAction:019542f5-b3e7-7d02-8000-000000000001') });
export const ActionIdParams = Obj({ actionId: IdString('AgentAction:019542f5-b3e7-7d02-8000-000000000001') });
export const CodeParams = Obj({ code: Type.String({ minLength: 1, maxLength: 64 }) });
export const RejectSchema = Obj({ reason: Type.Optional(Type.String({ maxLength: 1024 })) }, { title: 'AgentActionRejectRequest' });
