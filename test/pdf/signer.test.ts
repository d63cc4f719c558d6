import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_P12_FILE, SignerConfigError, createSigner } from '../../src/pdf/sign/signer.ts';
import { signPdf } from '../../src/pdf/sign/sign-pdf.ts';
import { readFixture } from '../fixtures/pdf/generate.ts';
import { pdfsig, qpdfCheck } from '../helpers/pdf-tools.ts';
import { type TestPki, createTestPki } from '../helpers/pki.ts';

let dir: string;
let pki: TestPki;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-signer-'));
  pki = await createTestPki(path.join(dir, 'pki'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createSigner', () => {
  it('creates the development certificate once and reuses it', async () => {
    const devCertDir = path.join(dir, 'data', 'signing');
    const [a, b] = await Promise.all([
      createSigner({ devCertDir, production: false }),
      createSigner({ devCertDir, production: false }),
    ]);
    expect(a.development).toBe(true);
    expect(a.certificate.equals(b.certificate)).toBe(true);
    const file = path.join(devCertDir, DEV_P12_FILE);
    const before = await stat(file);
    const bytes = await readFile(file);
    const c = await createSigner({ devCertDir, production: false });
    expect(c.certificate.equals(a.certificate)).toBe(true);
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
    expect((await readFile(file)).equals(bytes)).toBe(true);
    expect(before.mode & 0o077).toBe(0);
  });

  it('refuses to run production on the development certificate', async () => {
    const devCertDir = path.join(dir, 'prod-data');
    await expect(createSigner({ devCertDir, production: true })).rejects.toBeInstanceOf(SignerConfigError);
    // Nor when the development PKCS#12 is configured as if it were a real one.
    await createSigner({ devCertDir, production: false });
    await expect(
      createSigner({
        devCertDir,
        production: true,
        p12Path: path.join(devCertDir, DEV_P12_FILE),
        p12Password: 'wathiq-development',
      }),
    ).rejects.toThrow(/development certificate/);
  });

  it('loads a PKCS#12 written by OpenSSL 3 (AES-256, PBKDF2) with its chain, in production too', async () => {
    const signer = await createSigner({
      p12Path: pki.p12Path,
      p12Password: pki.p12Password,
      devCertDir: path.join(dir, 'unused'),
      production: true,
    });
    expect(signer.development).toBe(false);
    expect(signer.subject).toContain('Wathiq Test Document Signing');
    expect(signer.chain).toHaveLength(1);
    await expect(
      createSigner({ p12Path: pki.p12Path, p12Password: 'wrong', devCertDir: dir, production: true }),
    ).rejects.toThrow(/wrong password/);
    await expect(
      createSigner({ p12Path: path.join(dir, 'missing.p12'), devCertDir: dir, production: true }),
    ).rejects.toThrow(/SIGNING_P12_PATH/);
  });
});

describe('signPdf', () => {
  it('signs a PDF over its whole length with the development certificate', async () => {
    const signer = await createSigner({ devCertDir: path.join(dir, 'dev2'), production: false });
    const signed = await signPdf({
      pdf: await readFixture('good'),
      signer,
      signingTime: new Date('2026-02-01T08:00:00Z'),
    });
    const file = path.join(dir, 'signed-dev.pdf');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, signed));
    const { signatures, output } = pdfsig(file);
    expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: false });
    expect(output).toContain('Signing Time: Feb 01 2026 08:00:00');
    expect(qpdfCheck(file).clean).toBe(true);
  });
});
