import { AwsV4Signer } from 'aws4fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Storage, ensureS3Bucket, type S3StorageOptions } from '../../src/storage/s3-storage.ts';
import { readObject } from '../../src/storage/storage.ts';
import { makePdf, makePdfOfSize } from '../helpers/pdf.ts';
import { startLocalS3, type LocalS3 } from '../helpers/s3-server.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  documentOf,
  expectValidation,
  postDocument,
  startDocumentsService,
  type DocumentsService,
} from './support.ts';

let s3: LocalS3;
let service: DocumentsService;
let account: TestAccount;
let options: S3StorageOptions;

beforeAll(async () => {
  s3 = await startLocalS3();
  options = {
    bucket: 'wathiq-docs',
    region: 'us-east-1',
    endpoint: s3.endpoint,
    accessKeyId: 'test',
    secretAccessKey: 'test',
    forcePathStyle: true,
    spoolDir: '/tmp',
  };
  await ensureS3Bucket(options);
  service = await startDocumentsService({
    S3_BUCKET: options.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: 'test',
    S3_SECRET_ACCESS_KEY: 'test',
    MAX_UPLOAD_MB_BASIC: '1',
  });
  account = await service.createAccount({ plan: 'basic' });
}, 60_000);
afterAll(async () => {
  await service?.close();
  await s3?.stop();
});

/** Every key in the bucket (ListObjectsV2). */
async function bucketKeys(): Promise<string[]> {
  const signed = await new AwsV4Signer({
    url: `${s3.endpoint}/${options.bucket}?list-type=2`,
    accessKeyId: 'test',
    secretAccessKey: 'test',
    service: 's3',
    region: 'us-east-1',
  }).sign();
  const xml = await (await fetch(signed.url, { headers: signed.headers })).text();
  return [...xml.matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
}

describe('documents on S3-compatible storage', () => {
  it('stores the upload in the bucket, refuses an oversized one without leaving an object, deletes with the draft', async () => {
    expect(service.config.storage.driver).toBe('s3');
    const pdf = await makePdf(2);
    const doc = documentOf(
      await (await postDocument(service, account, { title: 'On S3' }, { file: pdf })).json(),
    );
    const row = await service.database.db('documents').where({ id: doc.id }).first<{ file_key: string }>();
    expect(await bucketKeys()).toEqual([row.file_key]);
    expect((await readObject(createS3Storage(options), row.file_key))!.equals(pdf)).toBe(true);
    expect(await service.storedFiles()).toEqual([]); // nothing on the local disk

    await expectValidation(
      await postDocument(
        service,
        account,
        { title: 'Too big' },
        { file: await makePdfOfSize(1024 * 1024 + 1) },
      ),
      { file: ['The file is larger than the 1 MB limit of the basic plan; upload a smaller PDF.'] },
    );
    expect(await bucketKeys()).toEqual([row.file_key]);

    expect((await service.request(`/documents/${doc.id}`, { method: 'DELETE', account })).status).toBe(200);
    expect(await bucketKeys()).toEqual([]);
  });
});
