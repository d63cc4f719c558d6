import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '../helpers/pdf.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/**
 * clients/python runs the quickstart against the live service (python-quickstart.py): create with two approvers,
 * send, act through the development inbox, follow the status, download the signed file and check its SHA-256
 * against the verification page's. The client needs only Python's standard library.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

let service: TestService;
let account: TestAccount;
let dir: string;
beforeAll(async () => {
  service = await startTestService({ env: { HOST: '127.0.0.1' } });
  account = await service.createAccount({ plan: 'enterprise' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-python-client-'));
});
afterAll(async () => {
  await service.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the Python client', () => {
  it('takes a document from upload to a signed download', async () => {
    const pdfPath = path.join(dir, 'contract.pdf');
    await writeFile(pdfPath, await makePdf(2));
    const { stdout } = await promisify(execFile)(
      'python3',
      [
        path.join(import.meta.dirname, 'python-quickstart.py'),
        service.api.url,
        account.key,
        account.secret,
        pdfPath,
      ],
      { env: { ...process.env, PYTHONPATH: path.join(ROOT, 'clients/python') }, timeout: 240_000 },
    );
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result.refused).toEqual({ status: 422, fields: ['approvers.0.phone'] });
    expect(result.created).toEqual({ status: 'draft', title_ar: 'عقد توريد', names: ['Sara', 'Omar'] });
    expect(result.sent).toBe('pending');
    expect(result.progress).toMatchObject({ completed: 2, total: 2 });
    expect(result.starts).toBe('%PDF-');
    expect(result.sha256).toBe(result.verified_sha256);
    expect(result.sha256).not.toBe(result.original_sha256);
  }, 300_000);
});
