import path from 'node:path';
import { z } from 'zod';
import { bool, optionalString } from './fields.ts';
import { defineSlice, type SliceEnv } from './slice.ts';

/** Where an S3-compatible bucket is and how to reach it. */
export interface S3Settings {
  bucket: string;
  region: string;
  /** `https://s3.<region>.amazonaws.com` when not given; any S3-compatible endpoint (MinIO, R2, moto) otherwise. */
  endpoint?: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** `endpoint/bucket/key` instead of `bucket.endpoint/key`; what most S3-compatible servers want. */
  forcePathStyle: boolean;
  /** Prepended to every key, so one bucket can hold several deployments. */
  prefix?: string;
  /** A local folder where a put is spooled (S3 needs the length up front). */
  spoolDir: string;
}

export type StorageConfig = { driver: 'local'; dir: string } | ({ driver: 's3' } & S3Settings);

const env = {
  S3_BUCKET: optionalString.describe(
    'store files in this S3-compatible bucket (AWS S3, MinIO, R2, ...) instead of DATA_DIR/files',
  ),
  S3_REGION: z.string().min(1).default('us-east-1').describe("the bucket's region"),
  S3_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('another S3-compatible endpoint, e.g. http://127.0.0.1:9000 for MinIO'),
  S3_ACCESS_KEY_ID: optionalString.describe('the access key, required with S3_BUCKET'),
  S3_SECRET_ACCESS_KEY: optionalString.describe('its secret, required with S3_BUCKET'),
  S3_SESSION_TOKEN: optionalString.describe('temporary credentials only'),
  S3_FORCE_PATH_STYLE: bool.optional().describe('true: endpoint/bucket/key addressing'),
  S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._/-]*$/, 'letters, digits, . _ - and /')
    .optional()
    .describe('a key prefix, so one bucket can serve several deployments'),
};

/** Local files under `${DATA_DIR}/files` unless S3_BUCKET is set; then the S3 credentials are required. */
function storageOf(e: SliceEnv<typeof env>, dataDir: string): StorageConfig {
  if (!e.S3_BUCKET || !e.S3_ACCESS_KEY_ID || !e.S3_SECRET_ACCESS_KEY)
    return { driver: 'local', dir: path.join(dataDir, 'files') };
  return {
    driver: 's3',
    bucket: e.S3_BUCKET,
    region: e.S3_REGION,
    endpoint: e.S3_ENDPOINT?.replace(/\/+$/, ''),
    accessKeyId: e.S3_ACCESS_KEY_ID,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY,
    sessionToken: e.S3_SESSION_TOKEN,
    // A custom endpoint is almost always MinIO-like and wants path-style addressing.
    forcePathStyle: e.S3_FORCE_PATH_STYLE ?? e.S3_ENDPOINT !== undefined,
    prefix: e.S3_PREFIX,
    spoolDir: path.join(dataDir, 'tmp'),
  };
}

export interface StorageSliceConfig {
  storage: StorageConfig;
}

export const storageSlice = defineSlice({
  title: 'File storage',
  about: 'Uploads, signatures and final signed PDFs. Unset S3_BUCKET: files live under DATA_DIR/files.',
  env,
  derivedDefaults: {
    S3_ENDPOINT: 'AWS (https://s3.<region>.amazonaws.com)',
    S3_FORCE_PATH_STYLE: 'true with S3_ENDPOINT',
  },
  checks: {
    storage: (e) => {
      if (!e.S3_BUCKET) return [];
      const issues: string[] = [];
      if (!e.S3_ACCESS_KEY_ID) issues.push('S3_ACCESS_KEY_ID: required when S3_BUCKET is set');
      if (!e.S3_SECRET_ACCESS_KEY) issues.push('S3_SECRET_ACCESS_KEY: required when S3_BUCKET is set');
      return issues;
    },
  },
  build: (e, ctx): StorageSliceConfig => ({ storage: storageOf(e, ctx.dataDir) }),
});
