import { type Cert, isSelfSigned, issuedBy, readCert } from './certificates.ts';
import { addDocTimestamp } from './doc-timestamp.ts';
import type { SignatureLevel } from './levels.ts';
import { type ValidationData, appendDss } from './dss.ts';
import { cmsCertificates, pdfSignatures } from './pdf-signatures.ts';
import { type CrlCache, LtvError, type RevocationOptions, fetchBytes, revocationOf } from './revocation.ts';

export { SIGNATURE_LEVELS, type SignatureLevel, needsTimestamp } from './levels.ts';

export interface LtvOptions {
  tsaUrl: string;
  tsaTimeoutMs?: number;
  revocation: RevocationOptions;
}

/**
 * The certificate chains of these certificates and the revocation status of every certificate in them but the
 * trust anchors (self-signed): OCSP where a certificate names a responder, a CRL otherwise. Missing issuers are
 * fetched from the certificates' caIssuers URLs. Throws LtvError when a certificate is revoked (or cannot be
 * checked at all), RevocationFetchError when a responder did not answer after its retries.
 */
export async function collectValidationData(
  certificates: Buffer[],
  opts: RevocationOptions,
): Promise<ValidationData> {
  const pool: Cert[] = [];
  const add = (der: Buffer): Cert => {
    const found = pool.find((c) => c.der.equals(der));
    if (found) return found;
    const cert = readCert(der);
    pool.push(cert);
    return cert;
  };
  const work = certificates.map(add);
  const done = new Set<Cert>();
  const ocsps: Buffer[] = [];
  const crls: Buffer[] = [];
  const crlCache: CrlCache = new Map();
  while (work.length > 0) {
    const cert = work.shift()!;
    if (done.has(cert)) continue;
    done.add(cert);
    if (isSelfSigned(cert)) continue;
    let issuer = pool.find((c) => c !== cert && issuedBy(cert, c));
    for (const url of issuer ? [] : cert.caIssuerUrls) {
      const der = await fetchBytes(url, { method: 'GET', accept: 'application/pkix-cert' }, opts).catch(
        () => undefined,
      );
      const candidate = der && tryReadCert(der);
      if (candidate && issuedBy(cert, candidate)) {
        issuer = add(candidate.der);
        break;
      }
    }
    if (!issuer) {
      throw new LtvError(
        'incomplete_chain',
        `The issuer of ${cert.x509.subject.replace(/\n/g, ', ')} is neither embedded nor reachable, so the chain cannot be embedded (B-LT).`,
      );
    }
    work.push(issuer);
    const revocation = await revocationOf(cert, issuer, opts, crlCache);
    if (revocation.kind === 'ocsp') {
      ocsps.push(revocation.ocsp.der);
      // A delegated responder's certificate goes in too; it needs its own status unless it is marked no-check.
      for (const der of revocation.ocsp.certs) {
        const responder = add(der);
        if (responder.ocspNoCheck) done.add(responder);
        else work.push(responder);
      }
    } else if (!crls.some((c) => c.equals(revocation.crl.der))) crls.push(revocation.crl.der);
  }
  return { certs: pool.map((c) => c.der), ocsps, crls };
}

function tryReadCert(der: Buffer): Cert | undefined {
  try {
    return readCert(der);
  } catch {
    return undefined;
  }
}

/**
 * Takes a file whose last signature is PAdES B-T to B-LT (a DSS dictionary with the chains and revocation data of
 * the signer and of the time-stamp authority) and, for B-LTA, adds a document time-stamp over it. B-B and B-T
 * files are returned as they are.
 */
export async function extendToLevel(pdf: Buffer, level: SignatureLevel, opts: LtvOptions): Promise<Buffer> {
  if (level === 'B-B' || level === 'B-T') return pdf;
  const signatures = await pdfSignatures(pdf);
  const last = signatures.at(-1);
  if (!last) throw new Error('the file has no signature to extend');
  const data = await collectValidationData(cmsCertificates(last.cms), opts.revocation);
  let out = await appendDss(pdf, data);
  if (level === 'B-LTA')
    out = await addDocTimestamp(out, { tsaUrl: opts.tsaUrl, tsaTimeoutMs: opts.tsaTimeoutMs });
  return out;
}
