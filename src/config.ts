import { BlockList, isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { parseEncryptionKeys, type EncryptionSettings } from './auth/secret-box.ts';
import { PDF_LIMIT_DEFAULTS, type PdfLimits } from './pdf/limits.ts';
import type { CscSignerOptions } from './pdf/sign/csc-signer.ts';
import type { Pkcs11SignerOptions } from './pdf/sign/pkcs11-signer.ts';
import type { SignerKind } from './pdf/sign/signer.ts';
import { SIGNATURE_LEVELS, type SignatureLevel } from './pdf/ltv/levels.ts';
import type { RevocationOptions } from './pdf/ltv/revocation.ts';
import { fairShareEnv, fairSharesFromEnv, type FairShares } from './rate-limit/fair-shares.ts';
import { storageConfigFromEnv, type StorageConfig } from './storage/storage-config.ts';
import type { WhatsAppConfig } from './whatsapp/types.ts';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const port = z.coerce.number().int().min(0).max(65535);

const intIn = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

// Meta's rules: template names are a-z, 0-9 and _; language codes look like ar or en_US.
const templateName = z.string().regex(/^[a-z0-9_]{1,512}$/, 'a WhatsApp template name (a-z, 0-9, _)');
const templateLanguage = z
  .string()
  .regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'a WhatsApp language code such as ar or en_US');

/** Every environment variable Wathiq reads, with its default. `.env.example` lists the same names. */
/** A port of an endpoint of its own (metrics, the worker's health): a number (0: any free port), or `off`. */
const portOrOff = z
  .string()
  .trim()
  .regex(/^(off|\d{1,5})$/, 'a port number (0: any free port), or off')
  .transform((v) => (v === 'off' ? ('off' as const) : Number(v)))
  .pipe(z.union([z.literal('off'), z.number().int().min(0).max(65535)]));

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset: 127.0.0.1 outside production (the dev inbox and console WhatsApp need loopback), 0.0.0.0 in production.
  HOST: z.string().trim().min(1).optional(),
  PORT: port.default(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  DATA_DIR: z.string().default('./data'),

  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  EMBEDDED_POSTGRES_PORT: port.default(54329),

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('document-approval'),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  // A Temporal cluster behind TLS (mTLS for self-hosted, an API key for Temporal Cloud).
  TEMPORAL_TLS: bool.optional(),
  TEMPORAL_TLS_CA_PATH: optionalString,
  TEMPORAL_TLS_CERT_PATH: optionalString,
  TEMPORAL_TLS_KEY_PATH: optionalString,
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  TEMPORAL_API_KEY: optionalString,

  JSON_BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, 'a size such as 1mb or 512kb')
    .default('1mb'),
  RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).default('memory'),
  // Authenticated keys kept in memory; PostgreSQL's notices drop a changed key at once (0: read every time).
  API_KEY_CACHE_TTL_MS: intIn(0, 3_600_000).default(60_000),
  // What one account may take of what all share: keys, requests per minute, uploads in flight (rate-limit/fair-shares.ts).
  ...fairShareEnv,
  MAX_UPLOAD_MB_BASIC: z.coerce.number().positive().max(1024).default(20),
  MAX_UPLOAD_MB_BUSINESS: z.coerce.number().positive().max(1024).default(20),
  MAX_UPLOAD_MB_ENTERPRISE: z.coerce.number().positive().max(1024).default(20),
  // Untrusted PDFs (src/pdf/limits.ts): decoding bounded by a pre-scan, parsing in worker threads with limits.
  PDF_MAX_DECODED_MB: z.coerce.number().positive().max(1_048_576).default(PDF_LIMIT_DEFAULTS.maxDecodedMb),
  PDF_MAX_DECODE_RATIO: z.coerce.number().min(1).max(1e9).default(PDF_LIMIT_DEFAULTS.maxDecodeRatio),
  PDF_MAX_FILTERS: intIn(1, 16).default(PDF_LIMIT_DEFAULTS.maxFilters),
  PDF_MAX_OBJECTS: intIn(100, 10_000_000).default(PDF_LIMIT_DEFAULTS.maxObjects),
  PDF_MAX_OBJECT_STREAMS: intIn(1, 1_000_000).default(PDF_LIMIT_DEFAULTS.maxObjectStreams),
  PDF_WORKER_TIMEOUT_MS: intIn(1, 600_000).default(PDF_LIMIT_DEFAULTS.workerTimeoutMs),
  PDF_WORKER_MEMORY_MB: intIn(16, 16_384).default(PDF_LIMIT_DEFAULTS.workerMemoryMb),
  PDF_MAX_CONCURRENT_INSPECTIONS: intIn(1, 256).default(PDF_LIMIT_DEFAULTS.maxConcurrentInspections),
  PDF_FINALIZE_TIMEOUT_MS: intIn(1, 600_000).default(PDF_LIMIT_DEFAULTS.finalizeTimeoutMs),
  PDF_FINALIZE_MEMORY_MB: intIn(16, 16_384).default(PDF_LIMIT_DEFAULTS.finalizeMemoryMb),
  PDF_MAX_CONCURRENT_FINALIZATIONS: intIn(1, 256).default(PDF_LIMIT_DEFAULTS.maxConcurrentFinalizations),
  // Exposures (issue 10): reverse proxies in front of the API, 0 to 10; false/true (the old switch) mean 0 and 1.
  TRUST_PROXY: z
    .string()
    .trim()
    .regex(/^(true|false|\d{1,2})$/, 'the number of reverse proxies in front of the API (0 = none)')
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v)))
    .pipe(z.number().int().min(0).max(10))
    .default(0),

  S3_BUCKET: optionalString,
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_SESSION_TOKEN: optionalString,
  S3_FORCE_PATH_STYLE: bool.optional(),
  S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._/-]*$/, 'letters, digits, . _ - and /')
    .optional(),

  WHATSAPP_PROVIDER: z.enum(['cloud', 'console']).default('console'),
  WHATSAPP_API_URL: z.url({ protocol: /^https?$/ }).default('https://graph.facebook.com/v21.0'),
  WHATSAPP_PHONE_NUMBER_ID: z
    .string()
    .regex(/^\d{1,32}$/, 'the numeric phone number id')
    .optional(),
  WHATSAPP_ACCESS_TOKEN: optionalString,
  WHATSAPP_APP_SECRET: optionalString,
  WHATSAPP_VERIFY_TOKEN: optionalString,
  WHATSAPP_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  WHATSAPP_TEMPLATE_APPROVAL: templateName.default('wathiq_approval_request'),
  WHATSAPP_TEMPLATE_APPROVAL_APPROVE: templateName.default('wathiq_approval_request_approve'),
  WHATSAPP_TEMPLATE_APPROVAL_REVIEW: templateName.default('wathiq_approval_request_review'),
  WHATSAPP_TEMPLATE_REMINDER: templateName.default('wathiq_reminder'),
  WHATSAPP_TEMPLATE_REMINDER_APPROVE: templateName.default('wathiq_reminder_approve'),
  WHATSAPP_TEMPLATE_REMINDER_REVIEW: templateName.default('wathiq_reminder_review'),
  WHATSAPP_TEMPLATE_VOIDED: templateName.default('wathiq_document_voided'),
  WHATSAPP_TEMPLATE_REJECTED: templateName.default('wathiq_document_rejected'),
  // Signed copies (issue 15 item 5): a template with a DOCUMENT header.
  WHATSAPP_TEMPLATE_SIGNED_COPY: templateName.default('wathiq_signed_copy'),
  WHATSAPP_TEMPLATE_LANGUAGE_AR: templateLanguage.default('ar'),
  WHATSAPP_TEMPLATE_LANGUAGE_EN: templateLanguage.default('en'),
  // WhatsApp outbox: recording a sent message's id before the activity gives up its attempt (issue 12, item 4)
  WHATSAPP_RECORD_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  WHATSAPP_RECORD_BACKOFF_MS: z.coerce.number().int().min(0).max(10_000).default(200),

  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_RETRY_SCALE: z.coerce.number().gt(0).max(1).default(1),

  // Reminders, dashboard sign-in delays and the purge of stale rows (issue 10, part 5b)
  REMIND_COOLDOWN_MINUTES: z.coerce.number().min(0).max(10_080).default(60),
  REMIND_MAX_PER_APPROVER: z.coerce.number().int().min(1).max(100).default(5),
  // Automatic reminders (issue 15, item 1): the default for accounts without their own; AUTO_REMIND_MAX=0 is off
  AUTO_REMIND_FIRST_AFTER_HOURS: z.coerce.number().int().min(1).max(8_760).default(24),
  AUTO_REMIND_EVERY_HOURS: z.coerce.number().int().min(1).max(8_760).default(24),
  AUTO_REMIND_MAX: z.coerce.number().int().min(0).max(100).default(0),
  APPROVAL_TIMER_SCALE: z.coerce.number().gt(0).max(1).default(1),
  LOGIN_DELAY_AFTER_FAILURES_EMAIL: z.coerce.number().int().min(1).max(100).default(3),
  LOGIN_DELAY_AFTER_FAILURES_IP: z.coerce.number().int().min(1).max(10_000).default(20),
  LOGIN_DELAY_AFTER_FAILURES_CODE: z.coerce.number().int().min(1).max(100).default(5),
  LOGIN_DELAY_BASE_SECONDS: z.coerce.number().gt(0).max(60).default(1),
  LOGIN_DELAY_MAX_SECONDS: z.coerce.number().gt(0).max(3600).default(60),
  LOGIN_FAILURE_WINDOW_MINUTES: z.coerce.number().gt(0).max(1440).default(15),
  PURGE_INTERVAL_MINUTES: z.coerce.number().gt(0).max(1440).default(60),
  PURGE_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  PURGE_MAX_BATCHES: z.coerce.number().int().min(1).max(10_000).default(100),

  // Approval workflow activity policies: how long an activity is retried before its defined outcome (issue 12, workflow recovery)
  APPROVAL_NOTIFY_RETRY_SECONDS: z.coerce.number().int().min(1).max(604_800).default(21_600),
  APPROVAL_FINALIZE_RETRY_SECONDS: z.coerce.number().int().min(1).max(604_800).default(14_400),
  APPROVAL_WRITE_RETRY_SECONDS: z.coerce.number().int().min(1).max(604_800).default(3_600),
  // How long the API waits for Temporal's answer to a send, an action, a delegation, a void or a remind before a 503
  APPROVAL_ANSWER_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(300).default(20),

  // Templates and bulk send: the size of a list, how a batch is worked through, and WhatsApp's limits per sending
  // number (messaging tier: unique recipients per rolling 24 h; throughput: messages per second) of which bulk
  // sends take at most BULK_SEND_QUOTA_SHARE
  BULK_SEND_MAX_ROWS: z.coerce.number().int().min(1).max(100_000).default(5000),
  BULK_SEND_MAX_MB: z.coerce.number().positive().max(100).default(5),
  BULK_SEND_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(50),
  BULK_SEND_PAGES_PER_RUN: z.coerce.number().int().min(1).max(1000).default(20),
  BULK_SEND_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  BULK_SEND_QUOTA_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  BULK_SEND_TIME_SCALE: z.coerce.number().gt(0).max(1).default(1),
  WHATSAPP_TIER_RECIPIENTS_PER_DAY: z.coerce.number().int().min(1).max(100_000_000).default(1000),
  WHATSAPP_THROUGHPUT_MPS: z.coerce.number().gt(0).max(10_000).default(80),

  // Keys that seal the secrets Wathiq must read back: "id:base64key[,id:base64key…]", the first seals.
  ENCRYPTION_KEYS: optionalString,
  SIGNING_P12_PATH: optionalString,
  SIGNING_P12_PASSWORD: z.string().optional(),
  TSA_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Signing keys: a PKCS#12 file, an HSM over PKCS#11, or a remote signing service (CSC API v2) (issue 14, item 3)
  SIGNER: z.enum(['p12', 'pkcs11', 'csc'] as const satisfies readonly SignerKind[]).default('p12'),
  SIGNING_PKCS11_MODULE: optionalString,
  SIGNING_PKCS11_SLOT: z.coerce.number().int().min(0).optional(),
  SIGNING_PKCS11_TOKEN_LABEL: optionalString,
  SIGNING_PKCS11_PIN: z.string().optional(),
  SIGNING_PKCS11_PIN_FILE: optionalString,
  SIGNING_PKCS11_KEY_LABEL: optionalString,
  SIGNING_PKCS11_KEY_ID: z
    .string()
    .regex(/^(?:[0-9a-fA-F]{2})+$/, "hex digits (the key object's CKA_ID)")
    .optional(),
  SIGNING_CSC_URL: z.url({ protocol: /^https?$/ }).optional(),
  SIGNING_CSC_TOKEN: optionalString,
  SIGNING_CSC_CLIENT_ID: optionalString,
  SIGNING_CSC_CLIENT_SECRET: optionalString,
  SIGNING_CSC_OAUTH_TOKEN_URL: z.url({ protocol: /^https?$/ }).optional(),
  SIGNING_CSC_CREDENTIAL_ID: optionalString,
  SIGNING_CSC_PIN: z.string().optional(),
  SIGNING_CSC_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  SIGNING_CSC_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  SIGNING_CSC_RETRY_BACKOFF_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  // Signature level: PAdES baseline level of final PDFs and revocation fetching for B-LT/B-LTA (issue 14, PAdES levels)
  SIGNATURE_LEVEL: z.enum(SIGNATURE_LEVELS).optional(),
  REVOCATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  REVOCATION_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  REVOCATION_MAX_BYTES: z.coerce.number().int().min(1024).max(209_715_200).default(10_485_760),
  ARCHIVE_RENEWAL_MARGIN_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  ARCHIVE_RENEWAL_INTERVAL_HOURS: z.coerce.number().int().min(1).max(744).default(24),
  ARCHIVE_RENEWAL_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
  // Approver images (approval page upload and final PDF)
  MAX_IMAGE_SIDE_PX: z.coerce.number().int().min(16).max(8192).default(4096),
  // Public verification page /v/{token} (issue 14, item 6): requests per client address and minute; upload limit of its check
  VERIFY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  VERIFY_CHECK_MAX_MB: z.coerce.number().positive().max(1024).default(64),
  // Verified approvers (issue 15 item 2): one-time codes over WhatsApp for the approval page
  OTP_TTL_MINUTES: z.coerce.number().gt(0).max(60).default(10),
  OTP_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  OTP_RESEND_SECONDS: z.coerce.number().min(0).max(3600).default(60),
  OTP_MAX_SENDS_PER_HOUR: z.coerce.number().int().min(1).max(100).default(5),
  OTP_SESSION_MINUTES: z.coerce.number().gt(0).max(1440).default(30),
  OTP_IP_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20),
  WHATSAPP_TEMPLATE_OTP: templateName.default('wathiq_otp'),

  // Metrics (issue 13, item 4): a Prometheus endpoint on its own port in each process
  METRICS_PORT: portOrOff.optional(),
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  METRICS_DOCUMENTS_CACHE_SECONDS: z.coerce.number().min(0).max(3600).default(15),
  // The worker's health endpoint (GET /health: 200 while it runs, polls and reaches Temporal), for a container check
  WORKER_HEALTH_PORT: portOrOff.default('off'),
  WORKER_HEALTH_HOST: z.string().trim().min(1).default('127.0.0.1'),

  // Tracing (issue 13, item 5): OpenTelemetry over OTLP/HTTP, on when the endpoint is set
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_SERVICE_NAME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, 'a service name (letters, digits, . _ -)')
    .optional(),
});

/** The metrics port when NODE_ENV=production and METRICS_PORT is unset (OpenTelemetry's Prometheus default). */
export const DEFAULT_METRICS_PORT = 9464;

export type Env = z.input<typeof schema>;

export interface Config {
  env: 'development' | 'test' | 'production';
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  http: {
    host: string;
    port: number;
    publicBaseUrl: string;
    jsonBodyLimit: string;
    /** Reverse proxies in front of the API: X-Forwarded-For entries they add are trusted, no others. */
    proxyHops: number;
  };
  dataDir: string;
  database: { url?: string; poolMax: number; embeddedPort: number };
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    cliPath?: string;
    devPort: number;
    uiPort: number;
    /** How to reach a configured cluster: TLS files are read when connecting (see temporal/connection-options). */
    tls: TemporalTlsSettings;
    apiKey?: string;
  };
  rateLimit: { store: 'memory' | 'postgres' };
  /** How long an authenticated key is kept in memory without a notice (0: not at all). */
  apiKeyCacheTtlMs: number;
  plans: Record<Plan, { requestsPerMinute: number; maxUploadBytes: number }>;
  /** One account's part of what all accounts share: keys, requests per minute on top of the plan's, uploads. */
  fairShares: FairShares;
  /** What reading one untrusted PDF may cost, at upload and at finalization. */
  pdf: PdfLimits;
  storage: StorageConfig;
  whatsapp: WhatsAppConfig;
  webhooks: {
    /** Lets webhooks reach loopback and private addresses: development and tests only. */
    allowPrivate: boolean;
    timeoutMs: number;
    /** Multiplies every retry delay; below 1 only in tests. */
    retryScale: number;
  };
  /** Per approver and document: a pause between reminders and a cap on how many. */
  reminders: { cooldownMs: number; maxPerApprover: number };
  /**
   * Automatic reminders: the default of accounts without their own (null when AUTO_REMIND_MAX is 0), and the
   * factor their hours are multiplied by when a document is sent — below 1 only in tests (APPROVAL_TIMER_SCALE).
   */
  autoReminders: {
    defaults: { first_after_hours: number; every_hours: number; max: number } | null;
    timerScale: number;
  };
  /** How long the approval workflow retries each kind of activity (schedule-to-close) before its defined outcome. */
  approvalPolicies: { notifyMs: number; finalizeMs: number; writeMs: number };
  /** How long the API waits for an approval workflow's answer before answering 503 (the answer is then lost). */
  approvalAnswerTimeoutMs: number;
  bulkSends: BulkSendSettings;
  /**
   * Dashboard sign-in: after `freeFailures` failures of one email (or one address, or one account's second-step
   * codes), each further attempt waits baseMs, 2×baseMs, 4×baseMs … up to maxMs; failures are forgotten after
   * `windowMs` without one.
   */
  login: {
    freeFailures: { email: number; ip: number; code: number };
    baseDelayMs: number;
    maxDelayMs: number;
    windowMs: number;
  };
  /** Each API process deletes stale rows (sign-in counters, idempotency keys, admin sessions) this often. */
  purge: { intervalMs: number; batchSize: number; maxBatches: number };
  /**
   * AES-256-GCM keys for the secrets Wathiq stores and must read back (`auth/secret-box.ts`); the first seals.
   * No keys (allowed outside production only): one is created once and kept at `devKeyPath`.
   */
  encryption: EncryptionSettings;
  signing: {
    /** PKCS#12 with the key and certificate chain that sign final PDFs; unset: the development certificate. */
    p12Path?: string;
    p12Password?: string;
    /** Where the development certificate is created once and kept: `${DATA_DIR}/signing`. */
    devCertDir: string;
    /** RFC 3161 time-stamp authority; adds a signature time-stamp (PAdES B-T and above). */
    tsaUrl?: string;
    /** Where the key is (SIGNER); `pkcs11` and `csc` set their block. */
    kind: SignerKind;
    pkcs11?: Pkcs11SignerOptions;
    csc?: CscSignerOptions;
    /** SIGNATURE_LEVEL; default B-LTA with TSA_URL, B-B without (see `signatureLevelWarning`). */
    signatureLevel: SignatureLevel;
    /** Whether SIGNATURE_LEVEL was left unset (B-B by default for want of a TSA: warned about at start-up). */
    signatureLevelDefaulted: boolean;
    /** REVOCATION_*: OCSP and CRL fetching for B-LT and B-LTA, inside the finalization activity. */
    revocation: RevocationOptions;
    /** ARCHIVE_RENEWAL_*: the schedule that renews B-LTA document time-stamps before their certificate expires. */
    archiveRenewal: { marginDays: number; intervalHours: number; batchSize: number };
  };
  /** The public verification page: per client address and minute (page and check), and the check's upload limit. */
  verification: { requestsPerMinute: number; checkMaxBytes: number };
  /** One-time codes of verified approvers (OTP_*): life, wrong tries, resend limits, the page's proof, per-IP cap. */
  otp: {
    ttlMs: number;
    maxAttempts: number;
    resendMs: number;
    maxSendsPerHour: number;
    sessionMs: number;
    ipPerMinute: number;
    template: string;
  };
  images: {
    /** Largest width and height of a signature or stamp image, checked at upload and again when decoding. */
    maxSidePx: number;
  };
  /**
   * The Prometheus endpoint (`GET /metrics`) of this process, on its own server; undefined when off (the default
   * outside production). Port 0 takes any free port (tests).
   */
  metrics?: {
    host: string;
    port: number;
    /** How long a count of documents by status is reused between scrapes. */
    documentsCacheMs: number;
  };
  /**
   * The worker's health endpoint (`GET /health`) on its own small server, in roles that run the worker; undefined
   * when off (the default). Port 0 takes any free port.
   */
  workerHealth?: { host: string; port: number };
  /** OpenTelemetry tracing; absent (no SDK, no spans) unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing?: {
    /** The collector's OTLP/HTTP base URL; spans go to `{endpoint}/v1/traces`. */
    endpoint: string;
    /** OTEL_SERVICE_NAME, or wathiq-api / wathiq-worker / wathiq by role. */
    serviceName: string;
  };
}

/** Templates and bulk send (BULK_SEND_*, WHATSAPP_TIER_*, WHATSAPP_THROUGHPUT_*). */
export interface BulkSendSettings {
  /** Rows one bulk send may have. */
  maxRows: number;
  /** Bytes of a bulk send's body (JSON rows or the CSV file), refused before it is parsed. */
  maxBytes: number;
  /** Rows the workflow hands one activity at a time. */
  pageSize: number;
  /** Pages one workflow run works through before it continues as new (its history stays bounded). */
  pagesPerRun: number;
  /** Rows of a page made and sent at the same time (the throughput share paces them all the same). */
  concurrency: number;
  /** The part of the messaging tier and of the throughput bulk sends may take (the rest is ordinary documents'). */
  share: number;
  /** Meta's messaging tier of the sending number: unique recipients of business-initiated messages per 24 h. */
  tierRecipientsPerDay: number;
  /** Meta's throughput of the sending number: messages per second. */
  throughputPerSecond: number;
  /** Multiplies the 24-hour window and the pauses it causes: 1, below it only in tests. */
  timeScale: number;
}

export const PLANS = ['basic', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface TemporalTlsSettings {
  enabled: boolean;
  caPath?: string;
  certPath?: string;
  keyPath?: string;
  serverName?: string;
}

/** A client certificate needs its key and the other way round; TLS files mean nothing with TLS switched off. */
function checkTemporalTls(e: z.infer<typeof schema>): string[] {
  const issues: string[] = [];
  if (Boolean(e.TEMPORAL_TLS_CERT_PATH) !== Boolean(e.TEMPORAL_TLS_KEY_PATH)) {
    issues.push(
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH: set both (the client certificate and its key) or neither',
    );
  }
  if (e.TEMPORAL_TLS === false) {
    const set = (['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_API_KEY'] as const).filter(
      (k) => e[k] !== undefined,
    );
    if (set.length > 0) issues.push(`TEMPORAL_TLS: is false, but ${set.join(' and ')} need TLS`);
  }
  return issues;
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The process roles of `node dist/main.js [api|worker]`; `all` is `npm start`. */
export type ConfigRole = 'all' | 'api' | 'worker';

/**
 * Reads and validates the environment once; a bad value stops start-up naming the variable. `role` says which
 * process reads it: only a process that runs the worker signs PDFs, so only it must name a signing certificate.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  options: { role?: ConfigRole } = {},
): Config {
  // Empty strings count as unset, as in most .env tooling.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const storage = storageConfigFromEnv(e, path.resolve(e.DATA_DIR));
  if (storage.issues.length > 0) throw new ConfigError(storage.issues);
  if (e.LOGIN_FAILURE_WINDOW_MINUTES * 60 < e.LOGIN_DELAY_MAX_SECONDS) {
    throw new ConfigError([
      'LOGIN_FAILURE_WINDOW_MINUTES: must be at least LOGIN_DELAY_MAX_SECONDS, or a delay would be forgotten before it ends',
    ]);
  }
  const host = e.HOST ?? (e.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1');
  const whatsappIssues = [
    ...checkWhatsApp(e, host),
    ...checkProduction(e, options.role ?? 'all'),
    ...checkSigner(e, options.role ?? 'all'),
  ];
  if (whatsappIssues.length > 0) throw new ConfigError(whatsappIssues);
  const temporalIssues = checkTemporalTls(e);
  if (temporalIssues.length > 0) throw new ConfigError(temporalIssues);
  if (e.SIGNATURE_LEVEL && e.SIGNATURE_LEVEL !== 'B-B' && !e.TSA_URL) {
    throw new ConfigError([
      `SIGNATURE_LEVEL: ${e.SIGNATURE_LEVEL} needs a time-stamp authority: set TSA_URL, or set SIGNATURE_LEVEL=B-B`,
    ]);
  }
  const encryption = parseEncryptionKeys(e.ENCRYPTION_KEYS ?? '');
  if (e.ENCRYPTION_KEYS !== undefined && encryption.issues.length > 0) {
    throw new ConfigError(encryption.issues.map((issue) => `ENCRYPTION_KEYS: ${issue}`));
  }
  const pdfIssues = checkPdfLimits(e);
  if (pdfIssues.length > 0) throw new ConfigError(pdfIssues);
  const { fairShares, issues: fairShareIssues } = fairSharesFromEnv(e);
  if (fairShareIssues.length > 0) throw new ConfigError(fairShareIssues);
  const metricsPort = e.METRICS_PORT ?? (e.NODE_ENV === 'production' ? DEFAULT_METRICS_PORT : 'off');
  if (metricsPort !== 'off' && metricsPort !== 0 && metricsPort === e.PORT && options.role !== 'worker') {
    throw new ConfigError([
      `METRICS_PORT: ${metricsPort} is the API's PORT; the metrics endpoint needs a port of its own`,
    ]);
  }
  const healthPort = e.WORKER_HEALTH_PORT;
  if (healthPort !== 'off' && healthPort !== 0 && healthPort === metricsPort) {
    throw new ConfigError([
      `WORKER_HEALTH_PORT: ${healthPort} is METRICS_PORT; the health endpoint needs a port of its own`,
    ]);
  }
  const mb = (n: number) => Math.floor(n * 1024 * 1024);
  return {
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    http: {
      host,
      port: e.PORT,
      publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
      jsonBodyLimit: e.JSON_BODY_LIMIT,
      proxyHops: e.TRUST_PROXY,
    },
    dataDir: path.resolve(e.DATA_DIR),
    database: { url: e.DATABASE_URL, poolMax: e.DATABASE_POOL_MAX, embeddedPort: e.EMBEDDED_POSTGRES_PORT },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      tls: {
        // An API key or any TLS file means TLS; TEMPORAL_TLS=true alone means TLS with the system's roots.
        enabled:
          e.TEMPORAL_TLS ?? Boolean(e.TEMPORAL_API_KEY ?? e.TEMPORAL_TLS_CA_PATH ?? e.TEMPORAL_TLS_CERT_PATH),
        caPath: e.TEMPORAL_TLS_CA_PATH,
        certPath: e.TEMPORAL_TLS_CERT_PATH,
        keyPath: e.TEMPORAL_TLS_KEY_PATH,
        serverName: e.TEMPORAL_TLS_SERVER_NAME,
      },
      apiKey: e.TEMPORAL_API_KEY,
    },
    rateLimit: { store: e.RATE_LIMIT_STORE },
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    plans: {
      basic: { requestsPerMinute: 100, maxUploadBytes: mb(e.MAX_UPLOAD_MB_BASIC) },
      business: { requestsPerMinute: 300, maxUploadBytes: mb(e.MAX_UPLOAD_MB_BUSINESS) },
      enterprise: { requestsPerMinute: 1000, maxUploadBytes: mb(e.MAX_UPLOAD_MB_ENTERPRISE) },
    },
    fairShares,
    pdf: {
      decode: {
        maxDecodedBytes: mb(e.PDF_MAX_DECODED_MB),
        maxDecodeRatio: e.PDF_MAX_DECODE_RATIO,
        maxFilters: e.PDF_MAX_FILTERS,
        maxObjects: e.PDF_MAX_OBJECTS,
        maxObjectStreams: e.PDF_MAX_OBJECT_STREAMS,
      },
      inspection: {
        concurrency: e.PDF_MAX_CONCURRENT_INSPECTIONS,
        timeoutMs: e.PDF_WORKER_TIMEOUT_MS,
        memoryMb: e.PDF_WORKER_MEMORY_MB,
      },
      finalization: {
        concurrency: e.PDF_MAX_CONCURRENT_FINALIZATIONS,
        timeoutMs: e.PDF_FINALIZE_TIMEOUT_MS,
        memoryMb: e.PDF_FINALIZE_MEMORY_MB,
      },
    },
    storage: storage.storage,
    whatsapp: {
      provider: e.WHATSAPP_PROVIDER,
      apiUrl: e.WHATSAPP_API_URL.replace(/\/+$/, ''),
      phoneNumberId: e.WHATSAPP_PHONE_NUMBER_ID,
      accessToken: e.WHATSAPP_ACCESS_TOKEN,
      appSecret: e.WHATSAPP_APP_SECRET,
      verifyToken: e.WHATSAPP_VERIFY_TOKEN,
      timeoutMs: e.WHATSAPP_TIMEOUT_MS,
      templates: {
        approvalRequest: {
          link: e.WHATSAPP_TEMPLATE_APPROVAL,
          approve: e.WHATSAPP_TEMPLATE_APPROVAL_APPROVE,
          review: e.WHATSAPP_TEMPLATE_APPROVAL_REVIEW,
        },
        reminder: {
          link: e.WHATSAPP_TEMPLATE_REMINDER,
          approve: e.WHATSAPP_TEMPLATE_REMINDER_APPROVE,
          review: e.WHATSAPP_TEMPLATE_REMINDER_REVIEW,
        },
        voided: e.WHATSAPP_TEMPLATE_VOIDED,
        rejected: e.WHATSAPP_TEMPLATE_REJECTED,
        signedCopy: e.WHATSAPP_TEMPLATE_SIGNED_COPY,
        languages: { ar: e.WHATSAPP_TEMPLATE_LANGUAGE_AR, en: e.WHATSAPP_TEMPLATE_LANGUAGE_EN },
      },
      recordRetry: { attempts: e.WHATSAPP_RECORD_ATTEMPTS, backoffMs: e.WHATSAPP_RECORD_BACKOFF_MS },
    },
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryScale: e.WEBHOOK_RETRY_SCALE,
    },
    approvalPolicies: {
      notifyMs: e.APPROVAL_NOTIFY_RETRY_SECONDS * 1000,
      finalizeMs: e.APPROVAL_FINALIZE_RETRY_SECONDS * 1000,
      writeMs: e.APPROVAL_WRITE_RETRY_SECONDS * 1000,
    },
    approvalAnswerTimeoutMs: e.APPROVAL_ANSWER_TIMEOUT_SECONDS * 1000,
    bulkSends: {
      maxRows: e.BULK_SEND_MAX_ROWS,
      maxBytes: mb(e.BULK_SEND_MAX_MB),
      pageSize: e.BULK_SEND_PAGE_SIZE,
      pagesPerRun: e.BULK_SEND_PAGES_PER_RUN,
      concurrency: e.BULK_SEND_CONCURRENCY,
      share: e.BULK_SEND_QUOTA_SHARE,
      tierRecipientsPerDay: e.WHATSAPP_TIER_RECIPIENTS_PER_DAY,
      throughputPerSecond: e.WHATSAPP_THROUGHPUT_MPS,
      timeScale: e.BULK_SEND_TIME_SCALE,
    },
    reminders: {
      cooldownMs: Math.round(e.REMIND_COOLDOWN_MINUTES * 60_000),
      maxPerApprover: e.REMIND_MAX_PER_APPROVER,
    },
    autoReminders: {
      defaults:
        e.AUTO_REMIND_MAX > 0
          ? {
              first_after_hours: e.AUTO_REMIND_FIRST_AFTER_HOURS,
              every_hours: e.AUTO_REMIND_EVERY_HOURS,
              max: Math.min(e.AUTO_REMIND_MAX, e.REMIND_MAX_PER_APPROVER),
            }
          : null,
      timerScale: e.APPROVAL_TIMER_SCALE,
    },
    login: {
      freeFailures: {
        email: e.LOGIN_DELAY_AFTER_FAILURES_EMAIL,
        ip: e.LOGIN_DELAY_AFTER_FAILURES_IP,
        code: e.LOGIN_DELAY_AFTER_FAILURES_CODE,
      },
      baseDelayMs: Math.round(e.LOGIN_DELAY_BASE_SECONDS * 1000),
      maxDelayMs: Math.round(Math.max(e.LOGIN_DELAY_MAX_SECONDS, e.LOGIN_DELAY_BASE_SECONDS) * 1000),
      windowMs: Math.round(e.LOGIN_FAILURE_WINDOW_MINUTES * 60_000),
    },
    purge: {
      intervalMs: Math.round(e.PURGE_INTERVAL_MINUTES * 60_000),
      batchSize: e.PURGE_BATCH_SIZE,
      maxBatches: e.PURGE_MAX_BATCHES,
    },
    encryption: {
      keys: e.ENCRYPTION_KEYS === undefined ? [] : encryption.keys,
      devKeyPath: path.join(path.resolve(e.DATA_DIR), 'keys', 'encryption.key'),
    },
    signing: {
      p12Path: e.SIGNING_P12_PATH,
      p12Password: e.SIGNING_P12_PASSWORD,
      devCertDir: path.join(path.resolve(e.DATA_DIR), 'signing'),
      tsaUrl: e.TSA_URL,
      kind: e.SIGNER,
      ...(e.SIGNER === 'pkcs11' && {
        pkcs11: {
          modulePath: e.SIGNING_PKCS11_MODULE!,
          slot: e.SIGNING_PKCS11_SLOT,
          tokenLabel: e.SIGNING_PKCS11_TOKEN_LABEL,
          pin: e.SIGNING_PKCS11_PIN,
          pinFile: e.SIGNING_PKCS11_PIN_FILE,
          keyLabel: e.SIGNING_PKCS11_KEY_LABEL,
          keyId: e.SIGNING_PKCS11_KEY_ID?.toLowerCase(),
        },
      }),
      ...(e.SIGNER === 'csc' && {
        csc: {
          baseUrl: e.SIGNING_CSC_URL!,
          token: e.SIGNING_CSC_TOKEN,
          clientId: e.SIGNING_CSC_CLIENT_ID,
          clientSecret: e.SIGNING_CSC_CLIENT_SECRET,
          oauthTokenUrl: e.SIGNING_CSC_OAUTH_TOKEN_URL,
          credentialId: e.SIGNING_CSC_CREDENTIAL_ID,
          pin: e.SIGNING_CSC_PIN,
          timeoutMs: e.SIGNING_CSC_TIMEOUT_MS,
          retries: e.SIGNING_CSC_RETRIES,
          retryBackoffMs: e.SIGNING_CSC_RETRY_BACKOFF_MS,
        },
      }),
      signatureLevel: e.SIGNATURE_LEVEL ?? (e.TSA_URL ? 'B-LTA' : 'B-B'),
      signatureLevelDefaulted: e.SIGNATURE_LEVEL === undefined,
      revocation: {
        timeoutMs: e.REVOCATION_TIMEOUT_MS,
        retries: e.REVOCATION_RETRIES,
        maxBytes: e.REVOCATION_MAX_BYTES,
      },
      archiveRenewal: {
        marginDays: e.ARCHIVE_RENEWAL_MARGIN_DAYS,
        intervalHours: e.ARCHIVE_RENEWAL_INTERVAL_HOURS,
        batchSize: e.ARCHIVE_RENEWAL_BATCH_SIZE,
      },
    },
    images: { maxSidePx: e.MAX_IMAGE_SIDE_PX },
    otp: {
      ttlMs: Math.round(e.OTP_TTL_MINUTES * 60_000),
      maxAttempts: e.OTP_MAX_ATTEMPTS,
      resendMs: Math.round(e.OTP_RESEND_SECONDS * 1000),
      maxSendsPerHour: e.OTP_MAX_SENDS_PER_HOUR,
      sessionMs: Math.round(e.OTP_SESSION_MINUTES * 60_000),
      ipPerMinute: e.OTP_IP_PER_MINUTE,
      template: e.WHATSAPP_TEMPLATE_OTP,
    },
    verification: {
      requestsPerMinute: e.VERIFY_RATE_LIMIT_PER_MINUTE,
      checkMaxBytes: Math.round(e.VERIFY_CHECK_MAX_MB * 1024 * 1024),
    },
    ...(metricsPort !== 'off' && {
      metrics: {
        host: e.METRICS_HOST,
        port: metricsPort,
        documentsCacheMs: Math.round(e.METRICS_DOCUMENTS_CACHE_SECONDS * 1000),
      },
    }),
    ...(healthPort !== 'off' && { workerHealth: { host: e.WORKER_HEALTH_HOST, port: healthPort } }),
    ...(e.OTEL_EXPORTER_OTLP_ENDPOINT && {
      tracing: {
        endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''),
        serviceName: e.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAMES[options.role ?? 'all'],
      },
    }),
  };
}

/** The service name traces carry when OTEL_SERVICE_NAME is unset: one per process role. */
export const DEFAULT_SERVICE_NAMES: Record<ConfigRole, string> = {
  all: 'wathiq',
  api: 'wathiq-api',
  worker: 'wathiq-worker',
};

/** A file accepted at upload must not fail finalization for want of time or memory the upload had. */
function checkPdfLimits(e: z.infer<typeof schema>): string[] {
  const issues: string[] = [];
  if (e.PDF_FINALIZE_TIMEOUT_MS < e.PDF_WORKER_TIMEOUT_MS) {
    issues.push(
      'PDF_FINALIZE_TIMEOUT_MS: must be at least PDF_WORKER_TIMEOUT_MS (finalization reads what upload read)',
    );
  }
  if (e.PDF_FINALIZE_MEMORY_MB < e.PDF_WORKER_MEMORY_MB) {
    issues.push(
      'PDF_FINALIZE_MEMORY_MB: must be at least PDF_WORKER_MEMORY_MB (finalization reads what upload read)',
    );
  }
  return issues;
}

/**
 * The variables a signer kind needs, checked where PDFs are signed (the worker), named by the refusal. The
 * token's or service's answers (a wrong PIN, an unknown credential) are checked when the worker loads the signer.
 */
function checkSigner(e: z.infer<typeof schema>, role: ConfigRole): string[] {
  if (role === 'api') return [];
  const issues: string[] = [];
  if (e.SIGNER === 'pkcs11') {
    if (e.SIGNING_PKCS11_MODULE === undefined)
      issues.push('SIGNING_PKCS11_MODULE: required when SIGNER=pkcs11 (the PKCS#11 library of the HSM)');
    if (e.SIGNING_PKCS11_PIN === undefined && e.SIGNING_PKCS11_PIN_FILE === undefined)
      issues.push('SIGNING_PKCS11_PIN: required when SIGNER=pkcs11, or SIGNING_PKCS11_PIN_FILE');
    if (e.SIGNING_PKCS11_SLOT !== undefined && e.SIGNING_PKCS11_TOKEN_LABEL !== undefined)
      issues.push('SIGNING_PKCS11_SLOT: set it or SIGNING_PKCS11_TOKEN_LABEL, not both');
  }
  if (e.SIGNER === 'csc') {
    if (e.SIGNING_CSC_URL === undefined)
      issues.push('SIGNING_CSC_URL: required when SIGNER=csc (the service base, ending in /csc/v2)');
    const client = e.SIGNING_CSC_CLIENT_ID !== undefined || e.SIGNING_CSC_CLIENT_SECRET !== undefined;
    if (e.SIGNING_CSC_TOKEN === undefined && !client)
      issues.push(
        'SIGNING_CSC_TOKEN: required when SIGNER=csc, or SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET',
      );
    if (client && (e.SIGNING_CSC_CLIENT_ID === undefined || e.SIGNING_CSC_CLIENT_SECRET === undefined))
      issues.push(
        'SIGNING_CSC_CLIENT_SECRET: SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET go together',
      );
  }
  return issues;
}

/**
 * Production start-up refuses what is only safe on a developer's machine (issue 13, item 3), each refusal naming
 * its variable. The console provider and an empty WHATSAPP_APP_SECRET are refused by checkWhatsApp; the content of
 * a configured certificate (the development one copied under another name) is checked when the worker starts.
 */
function checkProduction(e: z.infer<typeof schema>, role: ConfigRole): string[] {
  if (e.NODE_ENV !== 'production') return [];
  const issues: string[] = [];
  const publicUrl = e.PUBLIC_BASE_URL === undefined ? undefined : new URL(e.PUBLIC_BASE_URL);
  if (publicUrl?.protocol !== 'https:') {
    issues.push(
      `PUBLIC_BASE_URL: must be an https URL when NODE_ENV=production (approval links and downloads carry their tokens in the path), not ${e.PUBLIC_BASE_URL ?? 'unset'}`,
    );
  }
  if (e.WEBHOOK_ALLOW_PRIVATE) {
    issues.push(
      'WEBHOOK_ALLOW_PRIVATE: true lets webhooks reach loopback and private addresses; it is for development and tests, not NODE_ENV=production',
    );
  }
  if (role !== 'api' && e.SIGNER === 'csc' && e.SIGNING_CSC_URL?.startsWith('http:')) {
    issues.push(
      `SIGNING_CSC_URL: must be an https URL when NODE_ENV=production (the service's credentials and PIN travel to it), not ${e.SIGNING_CSC_URL}`,
    );
  }
  if (e.ENCRYPTION_KEYS === undefined) {
    issues.push(
      'ENCRYPTION_KEYS: required when NODE_ENV=production ("<id>:<32 bytes base64>", e.g. k1:$(openssl rand -base64 32)); the development key file is refused',
    );
  }
  if (role !== 'api' && e.SIGNER === 'p12') {
    // DEV_P12_FILE of src/pdf/sign/signer.ts, where the development certificate is kept (signing.devCertDir).
    const devCert = path.join(path.resolve(e.DATA_DIR), 'signing', 'dev-signing-certificate.p12');
    if (e.SIGNING_P12_PATH === undefined) {
      issues.push(
        'SIGNING_P12_PATH: required when NODE_ENV=production (with SIGNING_P12_PASSWORD); the development certificate is refused',
      );
    } else if (path.resolve(e.SIGNING_P12_PATH) === devCert) {
      issues.push(
        `SIGNING_P12_PATH: ${e.SIGNING_P12_PATH} is the development certificate, which is refused when NODE_ENV=production`,
      );
    }
  }
  return issues;
}

/**
 * The Cloud API needs its ids and secrets; the console provider is for development only
 * (docs/product-rules.md §5), on a server that listens on loopback (its messages, approval links included, are
 * read at /dev/inbox).
 */
function checkWhatsApp(e: z.infer<typeof schema>, host: string): string[] {
  if (e.WHATSAPP_PROVIDER === 'console') {
    if (e.NODE_ENV === 'production')
      return ['WHATSAPP_PROVIDER: console is for development; use cloud when NODE_ENV=production'];
    return isLoopbackHost(host)
      ? []
      : [
          `WHATSAPP_PROVIDER: console needs a loopback HOST (127.0.0.1, ::1, localhost), not ${host}: its messages and their approval links are listed at /dev/inbox; use cloud on a server others can reach`,
        ];
  }
  const required = {
    WHATSAPP_PHONE_NUMBER_ID: e.WHATSAPP_PHONE_NUMBER_ID,
    WHATSAPP_ACCESS_TOKEN: e.WHATSAPP_ACCESS_TOKEN,
    WHATSAPP_APP_SECRET: e.WHATSAPP_APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: e.WHATSAPP_VERIFY_TOKEN,
  };
  return Object.entries(required)
    .filter(([, v]) => v === undefined)
    .map(([name]) => `${name}: required when WHATSAPP_PROVIDER=cloud`);
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True when `host` (a HOST value: an address or a name to listen on) reaches this machine only: 127.0.0.0/8,
 * ::1, an IPv4-mapped loopback address, or `localhost`. `0.0.0.0`, `::` and every other address are not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  if (isIP(v4) === 4) return LOOPBACK.check(v4, 'ipv4');
  return isIP(h) === 6 && LOOPBACK.check(h, 'ipv6');
}

/**
 * The development inbox and the console WhatsApp provider hand every approval link to whoever opens the page, so
 * they exist only outside production and only on a server that listens on loopback.
 */
export function devToolsAllowed(config: { env: string; http: { host: string } }): boolean {
  return config.env !== 'production' && isLoopbackHost(config.http.host);
}

/**
 * The start-up warning about the signature level, if any: without TSA_URL (and SIGNATURE_LEVEL unset) final PDFs are
 * PAdES B-B, which no validator can check once the signing certificate has expired or been revoked.
 */
export function signatureLevelWarning(config: Pick<Config, 'signing'>): string | undefined {
  if (!config.signing.signatureLevelDefaulted || config.signing.signatureLevel !== 'B-B') return undefined;
  return 'TSA_URL is not set: final PDFs are signed at PAdES B-B (no time-stamp, no long-term validation data). Set TSA_URL for B-LTA (the default with a time-stamp authority), or SIGNATURE_LEVEL=B-B to silence this.';
}
