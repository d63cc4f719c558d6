import { z } from 'zod';
import { apiLimitsSlice, type ApiLimitsConfig } from './config/api-limits.ts';
import { approvalSlice, type ApprovalConfig } from './config/approval.ts';
import { bulkSendsSlice, type BulkSendsConfig } from './config/bulk-sends.ts';
import { databaseSlice, type DatabaseConfig } from './config/database.ts';
import { encryptionSlice, type EncryptionConfig } from './config/encryption.ts';
import { httpSlice, listenHost, type HttpConfig } from './config/http.ts';
import { imagesSlice, type ImagesConfig } from './config/images.ts';
import { metricsSlice, type MetricsConfig } from './config/metrics.ts';
import { otpSlice, type OtpConfig } from './config/otp.ts';
import { pdfSlice, type PdfConfig } from './config/pdf.ts';
import { purgeSlice, type PurgeConfig } from './config/purge.ts';
import { resolveDataDir, runtimeSlice, type RuntimeConfig } from './config/runtime.ts';
import { signInSlice, type SignInConfig } from './config/sign-in.ts';
import type { SigningConfig } from './config/signing-options.ts';
import { signingSlice } from './config/signing.ts';
import { CHECK_STAGES, type ConfigRole, type ConfigSlice, type LoadContext } from './config/slice.ts';
import { storageSlice, type StorageSliceConfig } from './config/storage.ts';
import { temporalSlice, type TemporalConfig } from './config/temporal.ts';
import { tracingSlice, type TracingConfig } from './config/tracing.ts';
import { verificationSlice, type VerificationConfig } from './config/verification.ts';
import { webhooksSlice, type WebhooksConfig } from './config/webhooks.ts';
import { whatsappSlice, type WhatsAppSliceConfig } from './config/whatsapp.ts';

export type { ConfigRole } from './config/slice.ts';
export type { BulkSendSettings } from './config/bulk-sends.ts';
export type { TemporalTlsSettings } from './config/temporal.ts';
export { devToolsAllowed, isLoopbackHost } from './config/http.ts';
export { DEFAULT_METRICS_PORT } from './config/metrics.ts';
export { DEFAULT_SERVICE_NAMES } from './config/tracing.ts';
export { signatureLevelWarning } from './config/signing.ts';

/**
 * Every area of the configuration, in the order of its reference (docs/configuration.md, .env.example, both
 * generated from these by `npm run docs:config`). Each slice owns its variables, their defaults and checks, and
 * builds its part of `Config`.
 */
export const CONFIG_SLICES = [
  runtimeSlice,
  httpSlice,
  databaseSlice,
  temporalSlice,
  apiLimitsSlice,
  pdfSlice,
  storageSlice,
  whatsappSlice,
  webhooksSlice,
  approvalSlice,
  bulkSendsSlice,
  signInSlice,
  purgeSlice,
  encryptionSlice,
  signingSlice,
  imagesSlice,
  verificationSlice,
  otpSlice,
  metricsSlice,
  tracingSlice,
] as const;

/** The whole configuration: every slice's part. */
export interface Config
  extends
    RuntimeConfig,
    HttpConfig,
    DatabaseConfig,
    TemporalConfig,
    ApiLimitsConfig,
    PdfConfig,
    StorageSliceConfig,
    WhatsAppSliceConfig,
    WebhooksConfig,
    ApprovalConfig,
    BulkSendsConfig,
    SignInConfig,
    PurgeConfig,
    EncryptionConfig,
    SigningConfig,
    ImagesConfig,
    VerificationConfig,
    OtpConfig,
    MetricsConfig,
    TracingConfig {}

/** Every environment variable Wathiq reads, with its default: the slices' variables together. */
const schema = z.object(Object.assign({}, ...CONFIG_SLICES.map((s) => s.env)) as z.ZodRawShape);

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The slices as loadConfig drives them: each reads the parsed variables it declared (and no others). */
const slices = CONFIG_SLICES as readonly ConfigSlice[] as readonly ConfigSlice<
  z.ZodRawShape,
  Partial<Config>
>[];

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
  const e = parsed.data as Record<string, unknown>;
  const nodeEnv = e.NODE_ENV as LoadContext['nodeEnv'];
  const ctx: LoadContext = {
    nodeEnv,
    role: options.role ?? 'all',
    dataDir: resolveDataDir(e.DATA_DIR as string),
    host: listenHost(e.HOST as string | undefined, nodeEnv),
    port: e.PORT as number,
  };
  for (const stage of CHECK_STAGES) {
    const issues = stage.flatMap((check) => slices.flatMap((slice) => slice.checks?.[check]?.(e, ctx) ?? []));
    if (issues.length > 0) throw new ConfigError(issues);
  }
  return Object.assign({}, ...slices.map((slice) => slice.build(e, ctx))) as Config;
}
