import path from 'node:path';
import { z } from 'zod';
import { storageConfigFromEnv, type StorageConfig } from './storage/storage-config.ts';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const port = z.coerce.number().int().min(0).max(65535);

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** Every environment variable Wathiq reads, with its default. `.env.example` lists the same names. */
const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HOST: z.string().default('0.0.0.0'),
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

  JSON_BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, 'a size such as 1mb or 512kb')
    .default('1mb'),
  RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).default('memory'),
  MAX_UPLOAD_MB_BASIC: z.coerce.number().positive().max(1024).default(20),
  MAX_UPLOAD_MB_BUSINESS: z.coerce.number().positive().max(1024).default(20),
  MAX_UPLOAD_MB_ENTERPRISE: z.coerce.number().positive().max(1024).default(20),
  TRUST_PROXY: bool.default(false),

  S3_BUCKET: optionalString,
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_SESSION_TOKEN: optionalString,
  S3_FORCE_PATH_STYLE: bool.optional(),
  S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._\/-]*$/, 'letters, digits, . _ - and /')
    .optional(),
});

export type Env = z.input<typeof schema>;

export interface Config {
  env: 'development' | 'test' | 'production';
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  http: { host: string; port: number; publicBaseUrl: string; jsonBodyLimit: string; trustProxy: boolean };
  dataDir: string;
  database: { url?: string; poolMax: number; embeddedPort: number };
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    cliPath?: string;
    devPort: number;
    uiPort: number;
  };
  rateLimit: { store: 'memory' | 'postgres' };
  plans: Record<Plan, { requestsPerMinute: number; maxUploadBytes: number }>;
  storage: StorageConfig;
}

export const PLANS = ['basic', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment once; a bad value stops start-up naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, as in most .env tooling.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const storage = storageConfigFromEnv(e, path.resolve(e.DATA_DIR));
  if (storage.issues.length > 0) throw new ConfigError(storage.issues);
  const mb = (n: number) => Math.floor(n * 1024 * 1024);
  return {
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    http: {
      host: e.HOST,
      port: e.PORT,
      publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
      jsonBodyLimit: e.JSON_BODY_LIMIT,
      trustProxy: e.TRUST_PROXY,
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
    },
    rateLimit: { store: e.RATE_LIMIT_STORE },
    plans: {
      basic: { requestsPerMinute: 100, maxUploadBytes: mb(e.MAX_UPLOAD_MB_BASIC) },
      business: { requestsPerMinute: 300, maxUploadBytes: mb(e.MAX_UPLOAD_MB_BUSINESS) },
      enterprise: { requestsPerMinute: 1000, maxUploadBytes: mb(e.MAX_UPLOAD_MB_ENTERPRISE) },
    },
    storage: storage.storage,
  };
}
