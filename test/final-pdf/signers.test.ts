import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeCsc, startFakeCsc } from '../fakes/csc-server.ts';
import { eventually, linkTokenOf, messagesTo, pagePost, send, statusOf } from '../helpers/approval-flow.ts';
import {
  type BilingualApprover,
  type CreatedDocument,
  createBilingualDocument,
  download,
  driveToApproval,
  fetchPublic,
  type FinalPdfHarness,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { pdfsig } from '../helpers/pdf-tools.ts';
import { certDer, createTestPki, type TestPki } from '../helpers/pki.ts';
import { retryFinalizationCli } from '../helpers/retry-cli.ts';
import { SOFTHSM_MODULE, type SoftHsmToken, createSoftHsmToken } from '../helpers/softhsm.ts';

/**
 * Issue 14, item 3: keys outside the process. A document is signed end to end (real Temporal, PostgreSQL and
 * worker) with a key on a PKCS#11 token (SoftHSM2) and with a key held by a remote CSC v2 service; each file is
 * checked with pdfsig (and pyHanko) trusting the test CA, and carries the certificate the token or service gave.
 * The PKCS#12 kind is today's signer, exercised by final-pdf-flow.test.ts.
 */

const typedSigner = (): BilingualApprover[] => sixApprovers().filter((_, i) => i === 1);

interface SignatureJson {
  level: string;
  signed_at: string;
  certificate: { subject: string; issuer: string; serial: string; not_after: string };
  timestamp_authority: string | null;
}
interface DocumentJson {
  status: string;
  completed_at: string | null;
  finalization: { state: string; error: string | null } | null;
  signature: SignatureJson | null;
}

const getDocument = async (h: FinalPdfHarness, id: string) =>
  (
    (await (await h.service.request(`/documents/${id}`, { account: h.account })).json()) as {
      data: DocumentJson;
    }
  ).data;

/** The signed file of an approved document, written beside the harness's files. */
async function signedFile(h: FinalPdfHarness, doc: CreatedDocument): Promise<{ file: string; pdf: Buffer }> {
  const res = await download(h, doc.id);
  const body = (await res.json()) as { data: { download_url: string; signature: SignatureJson } };
  expect(res.status, JSON.stringify(body)).toBe(200);
  const pdf = Buffer.from(await (await fetchPublic(h, body.data.download_url)).arrayBuffer());
  const file = path.join(h.dataDir, `${doc.reference}.pdf`);
  await writeFile(file, pdf);
  return { file, pdf };
}

/** pdfsig trusting the test CA, and pyHanko when it is installed: one valid signature over the whole file. */
function expectTrustedSignature(file: string, pki: TestPki): void {
  const { signatures, output } = pdfsig(file, pki.nssDir);
  expect(signatures, output).toHaveLength(1);
  expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
  expect(output).toContain('Wathiq Test Document Signing');
  const pyhanko = spawnSync(
    'python3',
    [
      '-m',
      'pyhanko',
      'sign',
      'validate',
      '--no-revocation-check',
      '--trust',
      path.join(pki.dir, 'ca.pem'),
      file,
    ],
    { encoding: 'utf8' },
  );
  if (pyhanko.error || /No module named pyhanko/.test(pyhanko.stderr)) return; // not installed here
  expect(`${pyhanko.stdout}${pyhanko.stderr}`).toMatch(/INTACT:TRUSTED,UNTOUCHED/);
}

function expectTokenCertificate(signature: SignatureJson | null, pki: TestPki): void {
  expect(signature).toMatchObject({
    level: 'B-B',
    certificate: {
      subject: 'CN=Wathiq Test Document Signing, O=Wathiq tests',
      issuer: 'CN=Wathiq Test Root CA, O=Wathiq tests',
      serial: pki.leaf.cert.serialNumber.toUpperCase(),
    },
    timestamp_authority: null,
  });
}

describe('PKCS#11: a key on an HSM (SoftHSM2)', () => {
  let h: FinalPdfHarness;
  let token: SoftHsmToken;
  let pinFile: string;
  let previousConf: string | undefined;

  beforeAll(async () => {
    pinFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'wathiq-pin-')), 'pin');
    await writeFile(pinFile, '000000\n'); // wrong, until the operator fixes it
    h = await startFinalPdfHarness({
      env: {
        APPROVAL_FINALIZE_RETRY_SECONDS: '3',
        SIGNER: 'pkcs11',
        SIGNING_PKCS11_MODULE: SOFTHSM_MODULE,
        SIGNING_PKCS11_TOKEN_LABEL: 'wathiq-test',
        SIGNING_PKCS11_PIN_FILE: pinFile,
        SIGNING_PKCS11_KEY_LABEL: 'signing',
      },
    });
    // The token holds the harness PKI's key and certificates; the worker loads the module at its first signature.
    token = await createSoftHsmToken(path.join(h.dataDir, 'hsm'), h.pki);
    previousConf = process.env.SOFTHSM2_CONF;
    process.env.SOFTHSM2_CONF = token.conf;
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    if (previousConf === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previousConf;
    await rm(h.dataDir, { recursive: true, force: true });
    await rm(path.dirname(pinFile), { recursive: true, force: true });
  });

  it('a wrong PIN fails the finalization, recoverably and named; with the PIN fixed the retry signs with the token', async () => {
    const approvers = typedSigner();
    const doc = await createBilingualDocument(h, 'parallel', approvers);
    const phone = approvers[0]!.phone;
    expect((await send(h, doc.id)).status).toBe(200);
    const message = await eventually(() => messagesTo(h, phone)[0]);
    const act = approvers[0]!.act;
    expect((await pagePost(h, linkTokenOf(message), 'complete', 'page' in act ? act.page : {})).status).toBe(
      200,
    );

    const failed = await eventually(async () => {
      const d = await getDocument(h, doc.id);
      return d.finalization?.state === 'failed' && d;
    }, 120_000);
    expect(failed.status).toBe('in_progress');
    expect(failed.finalization!.error).toMatch(
      /PKCS#11 login refused: the PIN is wrong \(CKR_PIN_INCORRECT\)/,
    );
    expect(failed.signature).toBeNull();

    await writeFile(pinFile, `${token.pin}\n`); // the operator fixes the PIN file
    const retried = await retryFinalizationCli(h.service, doc.reference);
    expect(retried.code, retried.stderr).toBe(0);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 120_000);

    const { file } = await signedFile(h, doc);
    expectTrustedSignature(file, h.pki);
    const signed = await getDocument(h, doc.id);
    expectTokenCertificate(signed.signature, h.pki);
    expect(signed.signature!.signed_at).toBe(signed.completed_at);
  }, 300_000);
});

describe('CSC API v2: a key held by a remote signing service', () => {
  let h: FinalPdfHarness;
  let csc: FakeCsc;
  let pki: TestPki;

  beforeAll(async () => {
    // The service's key and certificates: a PKI of its own, whose CA the checks below trust.
    pki = await createTestPki(await mkdtemp(path.join(os.tmpdir(), 'wathiq-csc-')));
    csc = await startFakeCsc({
      key: createPrivateKey(pki.leaf.keyPem),
      certificates: [certDer(pki.leaf), certDer(pki.ca)],
      clientId: 'wathiq-worker',
      clientSecret: 'client-secret-for-tests',
      pin: '4321',
    });
    h = await startFinalPdfHarness({
      env: {
        SIGNER: 'csc',
        SIGNING_CSC_URL: csc.url,
        // The fake speaks plain http, so its /info's oauth2 is refused unless the token URL is configured.
        SIGNING_CSC_OAUTH_TOKEN_URL: new URL('/oauth2/token', csc.url).href,
        SIGNING_CSC_CLIENT_ID: 'wathiq-worker',
        SIGNING_CSC_CLIENT_SECRET: 'client-secret-for-tests',
        SIGNING_CSC_PIN: '4321',
        SIGNING_CSC_RETRY_BACKOFF_MS: '10',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await csc?.close();
    await rm(h.dataDir, { recursive: true, force: true });
    await rm(pki.dir, { recursive: true, force: true });
  });

  it('signs through signHash, retrying a 500, sending the service only a digest', async () => {
    csc.failNext('signatures/signHash', 1); // a transient failure: tried again, not a failed finalization
    const approvers = typedSigner();
    const doc = await createBilingualDocument(h, 'parallel', approvers);
    await driveToApproval(h, doc, approvers, [0]);

    const { file, pdf } = await signedFile(h, doc);
    expectTrustedSignature(file, pki);

    const signHash = csc.requests.filter((r) => r.path === '/csc/v2/signatures/signHash');
    expect(signHash.map((r) => r.status)).toEqual([500, 200]);
    expect(csc.requests.filter((r) => r.path === '/oauth2/token').map((r) => r.status)).toEqual([200]);
    for (const r of csc.requests.filter((q) => q.path.startsWith('/csc/v2/') && q.path !== '/csc/v2/info'))
      expect(r.authorization).toMatch(/^Bearer [0-9a-f]{32}$/);
    // Only digests left the worker: small JSON bodies, no PDF bytes, each hash 32 bytes.
    const sent = Buffer.concat(csc.requests.map((r) => r.rawBody));
    expect(sent.includes('%PDF')).toBe(false);
    expect(sent.includes(pdf.subarray(0, 64))).toBe(false);
    for (const r of csc.requests) expect(r.rawBody.length).toBeLessThan(1024);
    const hashes = (JSON.parse(signHash[1]!.rawBody.toString()) as { hashes: string[] }).hashes;
    expect(hashes.map((x) => Buffer.from(x, 'base64').length)).toEqual([32]);

    const signed = await getDocument(h, doc.id);
    expectTokenCertificate(signed.signature, pki);
    const event = await h.service.database
      .db('document_events')
      .where({ document_id: doc.id, event: 'document.approved' })
      .first<{ data: { document: { signature: SignatureJson } } }>();
    expect(event.data.document.signature).toEqual(signed.signature);
  }, 300_000);
});
