import path from 'node:path';

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

export interface StorageEnv {
  S3_BUCKET?: string;
  S3_REGION: string;
  S3_ENDPOINT?: string;
  S3_ACCESS_KEY_ID?: string;
  S3_SECRET_ACCESS_KEY?: string;
  S3_SESSION_TOKEN?: string;
  S3_FORCE_PATH_STYLE?: boolean;
  S3_PREFIX?: string;
}

/** Local files under `${DATA_DIR}/files` unless S3_BUCKET is set; then the S3 credentials are required. */
export function storageConfigFromEnv(
  e: StorageEnv,
  dataDir: string,
): { storage: StorageConfig; issues: string[] } {
  const local: StorageConfig = { driver: 'local', dir: path.join(dataDir, 'files') };
  if (!e.S3_BUCKET) return { storage: local, issues: [] };
  const issues: string[] = [];
  if (!e.S3_ACCESS_KEY_ID) issues.push('S3_ACCESS_KEY_ID: required when S3_BUCKET is set');
  if (!e.S3_SECRET_ACCESS_KEY) issues.push('S3_SECRET_ACCESS_KEY: required when S3_BUCKET is set');
  if (issues.length) return { storage: local, issues };
  return {
    storage: {
      driver: 's3',
      bucket: e.S3_BUCKET,
      region: e.S3_REGION,
      endpoint: e.S3_ENDPOINT?.replace(/\/+$/, ''),
      accessKeyId: e.S3_ACCESS_KEY_ID!,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY!,
      sessionToken: e.S3_SESSION_TOKEN,
      // A custom endpoint is almost always MinIO-like and wants path-style addressing.
      forcePathStyle: e.S3_FORCE_PATH_STYLE ?? e.S3_ENDPOINT !== undefined,
      prefix: e.S3_PREFIX,
      spoolDir: path.join(dataDir, 'tmp'),
    },
    issues: [],
  };
}
