/**
 * The one closed catalogue of error statuses and codes (the spec's §7 plus the live API's full
 * per-status lists), the one error class, and named factories for the errors the server raises.
 * Every non-2xx body is `{status, code, message, details?}` with `status` equal to the HTTP status.
 */

export const ERROR_CATALOGUE = {
  400: [
    'INVALID_INPUT',
    'END_USER_TERMS_VERSION_NOT_FOUND',
    'MISSING_MANDATORY_USER_INFO',
    'INVITATION_ALREADY_CLAIMED',
    'INVITATIONS_NOT_CONFIGURED',
    'INVALID_UMA_ADDRESS',
    'INVITATION_CANCELLED',
    'QUOTE_REQUEST_FAILED',
    'INVALID_PAYREQ_RESPONSE',
    'INVALID_RECEIVER',
    'PARSE_PAYREQ_RESPONSE_ERROR',
    'CERT_CHAIN_INVALID',
    'CERT_CHAIN_EXPIRED',
    'INVALID_PUBKEY_FORMAT',
    'MISSING_REQUIRED_UMA_PARAMETERS',
    'SENDER_NOT_ACCEPTED',
    'AMOUNT_OUT_OF_RANGE',
    'INVALID_CURRENCY',
    'INVALID_TIMESTAMP',
    'INVALID_NONCE',
    'INVALID_REQUEST_FORMAT',
    'INVALID_BANK_ACCOUNT',
    'SELF_PAYMENT',
    'LOOKUP_REQUEST_FAILED',
    'PARSE_LNURLP_RESPONSE_ERROR',
    'INVALID_AMOUNT',
    'WEBHOOK_ENDPOINT_NOT_SET',
    'WEBHOOK_DELIVERY_ERROR',
    'LOW_QUALITY',
    'DATA_MISMATCH',
    'EXPIRED',
    'SUSPECTED_FRAUD',
    'UNSUITABLE_DOCUMENT',
    'INCOMPLETE',
    'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS',
    'SMS_OTP_CREDENTIAL_ALREADY_EXISTS',
    'PASSKEY_CREDENTIAL_ALREADY_EXISTS',
    'STABLECOIN_PROVIDER_ACCOUNT_INVALID',
    'STABLECOIN_PROVIDER_ACCOUNT_REVOKED',
    'STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED',
    'CARDHOLDER_KYC_NOT_APPROVED',
    // Cards: the live operations and guides use it, though the live Error400 enum lacks it (docs/cards.md).
    'FUNDING_SOURCE_INELIGIBLE',
    'TRANSACTION_SIZE_LIMIT_EXCEEDED',
    'EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED',
  ],
  401: [
    'UNAUTHORIZED',
    'INVALID_SIGNATURE',
    'WALLET_SIGNATURE_MISSING',
    'WALLET_SIGNATURE_MALFORMED',
    'WALLET_SIGNATURE_BODY_MISMATCH',
    'WALLET_SIGNATURE_INVALID',
    'REQUEST_ID_MISSING',
  ],
  403: ['FORBIDDEN', 'USER_NOT_READY', 'COUNTERPARTY_NOT_ALLOWED', 'VELOCITY_LIMIT_EXCEEDED', 'END_USER_TERMS_NOT_ACCEPTED'],
  404: [
    'TRANSACTION_NOT_FOUND',
    'INVITATION_NOT_FOUND',
    'USER_NOT_FOUND',
    'QUOTE_NOT_FOUND',
    'LOOKUP_REQUEST_NOT_FOUND',
    'TOKEN_NOT_FOUND',
    'BULK_UPLOAD_JOB_NOT_FOUND',
    'REFERENCE_NOT_FOUND',
    'UMA_NOT_FOUND',
    'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
  ],
  405: ['METHOD_NOT_ALLOWED'],
  409: [
    'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL',
    'TRANSACTION_NOT_CANCELLABLE',
    'UMA_ADDRESS_EXISTS',
    'EMAIL_OTP_EMAIL_ALREADY_EXISTS',
    'EMAIL_OTP_CREDENTIAL_SET_CHANGED',
    'PASSKEY_ALREADY_ENROLLED',
    'SCA_SESSION_REQUIRED',
    'BENEFICIARY_TRUSTED',
    'INVALID_STATE_TRANSITION',
    'CARD_ALREADY_CLOSED',
    'CARD_NOT_MUTABLE',
    'CONFLICT',
  ],
  410: ['CUSTOMER_DELETED'],
  412: ['UNSUPPORTED_UMA_VERSION'],
  423: ['ACCOUNT_LOCKED'],
  424: [
    'PAYREQ_REQUEST_FAILED',
    'COUNTERPARTY_PUBKEY_FETCH_ERROR',
    'NO_COMPATIBLE_UMA_VERSION',
    'LNURLP_REQUEST_FAILED',
    'EMAIL_OTP_CREDENTIAL_SYNC_FAILED',
  ],
  429: ['RATE_LIMITED', 'DAILY_VOLUME_LIMIT_EXCEEDED'],
  500: ['SERVICE_SWITCH_ERROR', 'GRID_SWITCH_ERROR', 'INTERNAL_ERROR'],
  501: ['UNRECOGNIZED_MANDATORY_PAYEE_DATA_KEY', 'NOT_IMPLEMENTED'],
  503: ['SERVICE_UNAVAILABLE'],
} as const;

type Catalogue = typeof ERROR_CATALOGUE;
export type ErrorStatus = keyof Catalogue;
export type ErrorCode<S extends ErrorStatus = ErrorStatus> = Catalogue[S][number];

/** One problem with one input field; `field` is a dot path such as `source.accountId`. */
export interface FieldError {
  field: string;
  message: string;
  constraint?: Record<string, unknown>;
}

export interface ErrorBody {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  /** Wallet-auth 401s name the failed check here (spec §4.12 item 6). */
  reason?: string;
}

/** The only error type handlers and services throw for an expected failure. */
export class ApiError<S extends ErrorStatus = ErrorStatus> extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: S,
    readonly code: ErrorCode<S>,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
    readonly reason?: string,
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { status: this.status, code: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.reason !== undefined) body.reason = this.reason;
    return body;
  }
}

/** Named factories: the call site says what went wrong, the catalogue says how it looks. */
export const errors = {
  invalidInput: (message: string, fieldErrors?: FieldError[]) =>
    new ApiError(400, 'INVALID_INPUT', message, fieldErrors ? { errors: fieldErrors } : undefined),
  invalidField: (field: string, message: string) =>
    new ApiError(400, 'INVALID_INPUT', `${field}: ${message}`, { errors: [{ field, message }] }),
  invalidCurrency: (code: string, field?: string) =>
    new ApiError(
      400,
      'INVALID_CURRENCY',
      `Unsupported currency: ${code}`,
      field ? { errors: [{ field, message: `unsupported currency ${code}` }] } : undefined,
    ),
  invalidCurrencies: (fieldErrors: FieldError[]) =>
    new ApiError(
      400,
      'INVALID_CURRENCY',
      `Invalid currency in ${fieldErrors[0]?.field ?? 'request'}: ${fieldErrors[0]?.message ?? 'unsupported'}`,
      { errors: fieldErrors },
    ),
  amountOutOfRange: (message: string, fieldErrors?: FieldError[]) =>
    new ApiError(400, 'AMOUNT_OUT_OF_RANGE', message, fieldErrors ? { errors: fieldErrors } : undefined),
  unauthorized: (message = 'Missing or invalid API credentials') =>
    new ApiError(401, 'UNAUTHORIZED', message, undefined, { 'WWW-Authenticate': 'Basic realm="corridor"' }),
  forbidden: (message: string) => new ApiError(403, 'FORBIDDEN', message),
  permissionBeyondCaller: (missing: string[]) =>
    new ApiError(403, 'FORBIDDEN', `This API token cannot grant ${missing.join(', ')}: a token grants only permissions it holds itself`, {
      missing,
    }),
  agentMovesMoney: (action: string) =>
    new ApiError(
      403,
      'FORBIDDEN',
      `${action} an agent whose policy moves money (CREATE_TRANSFERS or EXECUTE_QUOTES) needs the TRANSACT permission as well as MANAGE`,
      { missing: ['TRANSACT'] },
    ),
  sandboxOnly: () => new ApiError(403, 'FORBIDDEN', 'This operation is only available to sandbox platforms'),
  notFound: (what: string, id: string) => new ApiError(404, 'REFERENCE_NOT_FOUND', `${what} ${id} not found`),
  routeNotFound: (method: string, url: string) => new ApiError(404, 'REFERENCE_NOT_FOUND', `No route for ${method} ${url}`),
  quoteNotFound: (id: string) => new ApiError(404, 'QUOTE_NOT_FOUND', `Quote ${id} not found`),
  tokenNotFound: (id: string) => new ApiError(404, 'TOKEN_NOT_FOUND', `Token ${id} not found`),
  customerNotFound: (id: string) => new ApiError(404, 'USER_NOT_FOUND', `Customer ${id} not found`),
  customerDeleted: (id: string) => new ApiError(410, 'CUSTOMER_DELETED', `Customer ${id} has been deleted`),
  invalidBankAccount: (message: string, field?: string) =>
    new ApiError(400, 'INVALID_BANK_ACCOUNT', message, field ? { errors: [{ field, message }] } : undefined),
  umaAddressExists: (address: string) =>
    new ApiError(409, 'UMA_ADDRESS_EXISTS', `UMA address ${address} is already taken`, {
      errors: [{ field: 'umaAddress', message: 'is already taken' }],
    }),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ApiError(
      405,
      'METHOD_NOT_ALLOWED',
      `Method ${method} is not allowed here; allowed: ${allowed.join(', ')}`,
      { allowed },
      { Allow: allowed.join(', ') },
    ),
  conflict: (message: string, details?: Record<string, unknown>) => new ApiError(409, 'CONFLICT', message, details),
  idempotencyKeyReused: () => new ApiError(409, 'CONFLICT', 'Idempotency-Key was already used with a different request'),
  idempotencyInProgress: () => new ApiError(409, 'CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly'),
  webhookEndpointNotSet: () =>
    new ApiError(400, 'WEBHOOK_ENDPOINT_NOT_SET', 'No webhook endpoint is configured; set webhookEndpoint with PATCH /config'),
  webhookDeliveryError: (message: string, details: Record<string, unknown>) =>
    new ApiError(400, 'WEBHOOK_DELIVERY_ERROR', message, details),
  notImplemented: (message: string) => new ApiError(501, 'NOT_IMPLEMENTED', message),
  /**
   * An error of an area's own, by its live status and code (the catalogue above constrains both):
   * areas keep their named factories in their own module (`<area>.errors.ts`) built on this.
   */
  coded: <S extends ErrorStatus>(status: S, code: ErrorCode<S>, message: string, details?: Record<string, unknown>) =>
    new ApiError(status, code, message, details),
  internal: (requestId: string) =>
    new ApiError(500, 'INTERNAL_ERROR', `Internal error; quote request id ${requestId} when reporting it`, { requestId }),
  // authentication outside platform tokens, and the ledger
  adminDisabled: () => new ApiError(404, 'REFERENCE_NOT_FOUND', 'The admin API is disabled; set CORRIDOR_ADMIN_TOKEN to enable it'),
  adminUnauthorized: () => new ApiError(401, 'UNAUTHORIZED', 'Missing or invalid admin token', undefined, { 'WWW-Authenticate': 'Bearer' }),
  agentUnauthorized: () =>
    new ApiError(401, 'UNAUTHORIZED', 'Missing or invalid agent access token', undefined, { 'WWW-Authenticate': 'Bearer' }),
  balanceOverflow: (accountId: string) =>
    new ApiError(400, 'AMOUNT_OUT_OF_RANGE', `The balance of ${accountId} would exceed ${Number.MAX_SAFE_INTEGER}`),
  // payments & agents
  transactionNotFound: (id: string) => new ApiError(404, 'TRANSACTION_NOT_FOUND', `Transaction ${id} not found`),
  transactionNotCancellable: (id: string, status: string) =>
    new ApiError(409, 'TRANSACTION_NOT_CANCELLABLE', `Transaction ${id} is ${status} and can no longer be cancelled`),
  transactionNotPendingApproval: (id: string) =>
    new ApiError(409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', `Transaction ${id} is not waiting for the platform's approval`),
  /** The paying customer of a payment was deleted (the payment services' wording). */
  payerDeleted: (id: string) => new ApiError(410, 'CUSTOMER_DELETED', `Customer ${id} was deleted`),
  sendingCurrencyNotEnabled: (code: string) =>
    new ApiError(400, 'INVALID_CURRENCY', `The platform does not send ${code}`, {
      errors: [{ field: 'source', message: `sending currency ${code} is not enabled for outgoing payments` }],
    }),
  transferCurrencyMismatch: (from: string, to: string) =>
    new ApiError(400, 'INVALID_CURRENCY', `Transfers move one currency (${from} ≠ ${to}); use a quote to convert`, {
      errors: [{ field: 'destination.accountId', message: `currency ${to} differs from the source's ${from}` }],
    }),
  umaReceiverCurrency: (address: string, code: string) =>
    new ApiError(400, 'INVALID_CURRENCY', `${address} receives ${code}`, {
      errors: [{ field: 'destination.currency', message: `must be ${code}` }],
    }),
  fundingCurrencyMismatch: (code: string) =>
    new ApiError(400, 'INVALID_CURRENCY', `The quote is funded in ${code}`, {
      errors: [{ field: 'currencyCode', message: `must be ${code}` }],
    }),
  receivingCustomerNotFound: () => new ApiError(404, 'USER_NOT_FOUND', 'No such receiving customer on this platform'),
  receivingAccountMissing: (customerId: string, code: string) =>
    new ApiError(400, 'INVALID_CURRENCY', `Customer ${customerId} holds no ${code} account`, {
      errors: [{ field: 'receivingCurrencyCode', message: `the customer has no ${code} internal account` }],
    }),
  invalidUmaAddress: (address: string, field: string) =>
    new ApiError(400, 'INVALID_UMA_ADDRESS', `Not a UMA address: ${address}`, {
      errors: [{ field, message: 'must look like $name@domain' }],
    }),
  umaNotFound: (address: string) => new ApiError(404, 'UMA_NOT_FOUND', `No sandbox UMA party at ${address}`),
  deviceCodeNotFound: () => new ApiError(404, 'REFERENCE_NOT_FOUND', 'Device code not found'),
  agentPaused: () => new ApiError(403, 'FORBIDDEN', 'The agent is paused: it can read but cannot start actions'),
  agentPermissionMissing: (permission: string) =>
    new ApiError(403, 'FORBIDDEN', `The agent's policy does not grant ${permission}`, { permission }),
  agentAccountNotAllowed: (accountId: string) =>
    new ApiError(403, 'FORBIDDEN', `The agent's policy does not allow account ${accountId}`, { accountId }),
  agentLimitExceeded: (limit: string, max: number, value: number, currency: string) =>
    new ApiError(403, 'FORBIDDEN', `The movement exceeds the agent's ${limit} (${value} > ${max} ${currency})`, {
      limit,
      max,
      value,
      currency,
    }),
  // auth
  /** A failed embedded-wallet check: 401 whose `reason` (also in details) names the check (spec §4.12 item 6). */
  walletAuthFailed: (
    code:
      | 'UNAUTHORIZED'
      | 'WALLET_SIGNATURE_MISSING'
      | 'WALLET_SIGNATURE_MALFORMED'
      | 'WALLET_SIGNATURE_BODY_MISMATCH'
      | 'WALLET_SIGNATURE_INVALID'
      | 'REQUEST_ID_MISSING',
    reason: string,
  ) => {
    const messages = {
      UNAUTHORIZED: 'Authentication failed',
      WALLET_SIGNATURE_MISSING: 'Service-Wallet-Signature is required for this action',
      WALLET_SIGNATURE_MALFORMED: 'Service-Wallet-Signature cannot be parsed',
      WALLET_SIGNATURE_BODY_MISMATCH: 'The signed retry does not repeat the request it was challenged for',
      WALLET_SIGNATURE_INVALID: 'The wallet signature does not verify',
      REQUEST_ID_MISSING: 'Request-Id is required on the signed retry',
    } as const;
    return new ApiError(401, code, `${messages[code]}: ${reason}`, { reason }, undefined, reason);
  },
  credentialAlreadyExists: (type: 'EMAIL_OTP' | 'SMS_OTP' | 'PASSKEY') =>
    type === 'EMAIL_OTP'
      ? new ApiError(400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS', 'This wallet already has an EMAIL_OTP credential (one per account)')
      : type === 'SMS_OTP'
        ? new ApiError(400, 'SMS_OTP_CREDENTIAL_ALREADY_EXISTS', 'This wallet already has an SMS_OTP credential (one per account)')
        : new ApiError(400, 'PASSKEY_CREDENTIAL_ALREADY_EXISTS', 'A passkey with this credentialId is already registered on this wallet'),
  credentialRateLimited: (message: string, retryAfterSeconds: number) =>
    new ApiError(429, 'RATE_LIMITED', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) }),
  otpUnavailable: () =>
    new ApiError(
      501,
      'NOT_IMPLEMENTED',
      'Corridor does not deliver one-time passwords; OTP login is available on sandbox platforms (code 000000)',
    ),
  /** Corridor cannot fetch an identity provider's keys (it runs offline), so it cannot check a real token's signature. */
  oauthUnavailable: () =>
    new ApiError(
      501,
      'NOT_IMPLEMENTED',
      'Corridor cannot verify OIDC token signatures (it fetches no identity-provider keys); OAUTH credentials are available on sandbox platforms',
    ),
  // customers, kyc, accounts, config
  /** A customer's umaAddress that is not `$user@<the platform's umaDomain>` in the allowed characters. */
  customerUmaAddressInvalid: (message: string) =>
    new ApiError(400, 'INVALID_UMA_ADDRESS', `umaAddress: ${message}`, { errors: [{ field: 'umaAddress', message }] }),
  /** Currencies refused by field: ones the platform does not support (customers), or unknown ones (config). */
  currenciesRejected: (message: string, fieldErrors: FieldError[]) =>
    new ApiError(400, 'INVALID_CURRENCY', message, { errors: fieldErrors }),
  endUserTermsVersionNotFound: (version: string, current: string) =>
    new ApiError(
      400,
      'END_USER_TERMS_VERSION_NOT_FOUND',
      `End User Terms version ${version} does not exist; the current version is ${current}`,
      {
        errors: [{ field: 'endUserTermsConsent.termsVersion', message: `unknown version; the current one is ${current}` }],
      },
    ),
};

/** True when `code` belongs to `status` in the catalogue. */
export function isCatalogued(status: number, code: string): boolean {
  const codes = (ERROR_CATALOGUE as Record<number, readonly string[]>)[status];
  return codes?.includes(code) === true;
}
