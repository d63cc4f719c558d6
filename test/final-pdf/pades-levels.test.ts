import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizeDocument } from '../../src/pdf/finalize-document.ts';
import type { SignatureLevel } from '../../src/pdf/ltv/levels.ts';
import { DEFAULT_REVOCATION_OPTIONS } from '../../src/pdf/ltv/revocation.ts';
import { signerFromP12 } from '../../src/pdf/sign/signer.ts';
import { eventually, quickRepliesOf, requestFor, send, tapButton } from '../helpers/approval-flow.ts';
import {
  type DownloadBody,
  type FinalPdfHarness,
  createBilingualDocument,
  download,
  driveToApproval,
  fetchPublic,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { type LtvPki, startLtvPki } from '../helpers/ltv-pki.ts';
import { makePdf } from '../helpers/pdf.ts';
import { pdfsigAsync } from '../helpers/pdf-tools.ts';
import { sampleApprovers, sampleInput } from '../helpers/sample-input.ts';
import { type DssResult, dssValidate, dssValidatorJar, pyhankoValidate } from '../helpers/validators.ts';

/**
 * PAdES levels checked by the reference validators: each level's file (B-B and B-T online; B-LT and B-LTA also
 * offline, with every OCSP, CRL and AIA source switched off) passes the EU's DSS with the level as its format,
 * pyHanko agrees, and poppler still says valid. One document goes end to end through the workflow at the default
 * level (TSA_URL set, SIGNATURE_LEVEL unset: B-LTA); a revoked signing certificate fails its finalization.
 */

let pki: LtvPki;
let pkiDir: string;
let h: FinalPdfHarness;
const files = new Map<string, string>(); // name -> path

beforeAll(async () => {
  // The DSS build (first run on a machine only) overlaps the PKI and the service starting.
  const jar = dssValidatorJar();
  pkiDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-ltv-pki-'));
  pki = await startLtvPki(pkiDir);
  // The worker signs with the LTV PKI's certificate and time-stamp authority; SIGNATURE_LEVEL left to its default.
  h = await startFinalPdfHarness({
    env: { SIGNING_P12_PATH: pki.signerP12, SIGNING_P12_PASSWORD: pki.p12Password, TSA_URL: pki.tsaUrl },
  });
  await jar;
}, 600_000);

afterAll(async () => {
  await h?.close();
  await pki?.close();
  if (h) await rm(h.dataDir, { recursive: true, force: true });
  if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
});

const LEVELS: SignatureLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const FORMAT: Record<SignatureLevel, string> = {
  'B-B': 'PAdES-BASELINE-B',
  'B-T': 'PAdES-BASELINE-T',
  'B-LT': 'PAdES-BASELINE-LT',
  'B-LTA': 'PAdES-BASELINE-LTA',
};

function onlySignature(result: DssResult | undefined) {
  expect(result, 'DSS answered for the file').toBeDefined();
  expect(result!.signatures).toHaveLength(1);
  return result!.signatures[0]!;
}

describe('PAdES levels', () => {
  it('the test PKI answers every CRL a validator fetches side by side (two validators run at once below)', async () => {
    // `openssl ca -gencrl` on one CA twice at once failed on its crlnumber file: pyHanko, told 404, reported no
    // revocation information for the intermediate CA.
    // Ten of each at once, three times: before the fix about one round in two lost a CRL.
    const urls = Array.from({ length: 20 }, (_, i) => `${pki.baseUrl}/crl/${i % 2 ? 'int' : 'root'}.crl`);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(urls.map((url) => fetch(url)));
      expect(answers.map((r) => r.status)).toEqual(urls.map(() => 200));
      for (const r of answers) expect(r.headers.get('content-type')).toBe('application/pkix-crl');
    }
  });

  it(
    'each level signs, and the end-to-end document is B-LTA by default with its file at the same URL',
    { timeout: 240_000 },
    async () => {
      const signer = signerFromP12(await readFile(pki.signerP12), pki.p12Password);
      const original = await makePdf(2, 'Levels');
      for (const level of LEVELS) {
        const result = await finalizeDocument({
          ...sampleInput(original, signer, sampleApprovers(2)),
          options: {
            now: new Date(),
            tsaUrl: pki.tsaUrl,
            signatureLevel: level,
            revocation: DEFAULT_REVOCATION_OPTIONS,
          },
        });
        expect(result.signatureLevel).toBe(level);
        const file = path.join(h.dataDir, `${level}.pdf`);
        await writeFile(file, result.pdf);
        files.set(level, file);
      }

      const approvers = sixApprovers().filter((_, i) => i === 1 || i === 4); // typed sign, then approve_only
      const doc = await createBilingualDocument(h, 'sequential', approvers);
      await driveToApproval(h, doc, approvers, [0, 1]);
      const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;
      const res = await fetchPublic(h, data.download_url);
      expect(res.status).toBe(200);
      const file = path.join(h.dataDir, 'end-to-end.pdf');
      await writeFile(file, Buffer.from(await res.arrayBuffer()));
      files.set('end-to-end', file);
      // The OCSP responder, a CRL and two time-stamps (signature and document) were asked for, at least.
      expect(pki.requests.ocsp).toBeGreaterThan(0);
      expect(pki.requests.crl).toBeGreaterThan(0);
    },
  );

  it(
    'EU DSS: TOTAL_PASSED at each level, B-LT and B-LTA also with every online source off',
    { timeout: 300_000 },
    async () => {
      const name = (level: string) => files.get(level)!;
      const results = await dssValidate(pki.rootPem, [
        ...LEVELS.map((l) => ({ path: name(l), offline: false })),
        { path: name('end-to-end'), offline: false },
        { path: name('B-LT'), offline: true },
        { path: name('B-LTA'), offline: true },
        { path: name('end-to-end'), offline: true },
        // Control: a B-T file carries no revocation data, so offline DSS cannot conclude.
        { path: name('B-T'), offline: true },
      ]);
      const find = (level: string, offline: boolean) =>
        results.find((r) => r.file === name(level) && r.offline === offline);
      for (const [level, offline] of [
        ...LEVELS.map((l) => [l, false] as const),
        ['B-LT', true] as const,
        ['B-LTA', true] as const,
      ]) {
        const sig = onlySignature(find(level, offline));
        expect(sig, `${level}${offline ? ' offline' : ''}: ${JSON.stringify(sig)}`).toMatchObject({
          indication: 'TOTAL_PASSED',
          format: FORMAT[level],
        });
      }
      for (const offline of [false, true]) {
        const sig = onlySignature(find('end-to-end', offline));
        expect(sig, JSON.stringify(sig)).toMatchObject({
          indication: 'TOTAL_PASSED',
          format: FORMAT['B-LTA'],
        });
        // The signature time-stamp and the archive (document) time-stamp both pass.
        expect(sig.timestamps.map((t) => t.indication)).toEqual(['PASSED', 'PASSED']);
      }
      expect(onlySignature(find('B-T', true)).indication).not.toBe('TOTAL_PASSED');
    },
  );

  it(
    'pyHanko agrees (B-LT and B-LTA with the responders down), and pdfsig still says valid and trusted',
    { timeout: 240_000 },
    async () => {
      // Independent processes: run side by side (each is mostly Python start-up).
      const online = await Promise.all(
        (['B-B', 'B-T'] as const).map((level) => pyhankoValidate(pki.rootPem, files.get(level)!, 'validate')),
      );
      online.forEach((r, i) => expect(r.valid, `${['B-B', 'B-T'][i]}: ${r.output}`).toBe(true));
      pki.setOffline(true);
      try {
        const offline = ['B-LT', 'B-LTA', 'end-to-end', 'B-T'];
        const results = await Promise.all(
          offline.map((name) => pyhankoValidate(pki.rootPem, files.get(name)!, 'adesverify')),
        );
        // Control: without embedded revocation data pyHanko cannot validate the B-T file offline.
        results.forEach((r, i) => expect(r.valid, `${offline[i]}: ${r.output}`).toBe(offline[i] !== 'B-T'));
      } finally {
        pki.setOffline(false);
      }
      const checked = await Promise.all(
        [...files].map(async ([name, file]) => [name, await pdfsigAsync(file, pki.nssDir)] as const),
      );
      for (const [name, { signatures, output }] of checked) {
        expect(signatures.length, `${name}: ${output}`).toBeGreaterThan(0);
        expect(signatures[0], `${name}: ${output}`).toMatchObject({ valid: true, trusted: true });
      }
    },
  );

  it(
    'a revoked signing certificate fails finalization (recoverable, naming the revocation): no signed file',
    { timeout: 180_000 },
    async () => {
      await pki.revoke('signer');
      const approver = sixApprovers()[4]!; // approve_only, by button
      const doc = await createBilingualDocument(h, 'sequential', [approver]);
      expect((await send(h, doc.id)).status).toBe(200);
      const request = await requestFor(h, approver.phone, doc.id, 60_000);
      expect(
        (await tapButton(h, { from: approver.phone, payload: quickRepliesOf(request)[0]! })).status,
      ).toBe(200);
      const finalization = await eventually(async () => {
        const res = await h.service.request(`/documents/${doc.id}`, { account: h.account });
        const body = (await res.json()) as {
          data: { status: string; finalization: { state: string; error: string | null } | null };
        };
        return body.data.finalization?.state === 'failed' ? body.data : undefined;
      }, 120_000);
      expect(finalization.status).toBe('in_progress');
      expect(finalization.finalization?.error).toMatch(
        /Wathiq LTV Test Document Signing.*was revoked at .*OCSP/,
      );
      const row = await h.service.database
        .db('documents')
        .where({ id: doc.id })
        .first<{ final_sha256: string | null }>('final_sha256');
      expect(row?.final_sha256).toBeNull();
    },
  );
});
