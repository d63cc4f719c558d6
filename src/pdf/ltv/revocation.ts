import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { type Cert, LTV_OID, describe, issuedBy, readCert, sha1, verifySignature } from './certificates.ts';
import {
  DerError,
  type DerNode,
  TAG,
  child,
  children,
  explicit,
  integerHex,
  integer,
  isUniversal,
  nullValue,
  octetString,
  oid,
  oidString,
  parse,
  seq,
  tagged,
  timeValue,
} from './der.ts';
import type { RevocationOptions } from '../../config/signing-options.ts';

export type { RevocationOptions } from '../../config/signing-options.ts';

export const DEFAULT_REVOCATION_OPTIONS: RevocationOptions = {
  timeoutMs: 10_000,
  retries: 2,
  maxBytes: 10 * 1024 * 1024,
};

/**
 * Long-term validation cannot be built: a certificate is revoked, or names no way to check it. Retrying the same
 * certificate does not help; the operator replaces the certificate and retries finalization.
 */
export class LtvError extends Error {
  constructor(
    readonly code: 'certificate_revoked' | 'no_revocation_source' | 'incomplete_chain',
    message: string,
  ) {
    super(message);
    this.name = 'LtvError';
  }
}

/** A responder or distribution point did not answer usefully after its retries (worth another attempt later). */
export class RevocationFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevocationFetchError';
  }
}

/** Fetches a URL with a time limit, a size limit, no redirects, and retries with back-off. */
export async function fetchBytes(
  url: string,
  init: { method: 'GET' | 'POST'; body?: Buffer; contentType?: string; accept: string },
  opts: RevocationOptions,
  check: (body: Buffer) => void = () => undefined,
): Promise<Buffer> {
  let last = '';
  for (let attempt = 0; attempt <= opts.retries; attempt++) {
    if (attempt > 0) await sleep(Math.min(250 * 2 ** (attempt - 1), 4000));
    try {
      const res = await request(url, {
        method: init.method,
        headers: { accept: init.accept, ...(init.contentType ? { 'content-type': init.contentType } : {}) },
        body: init.body,
        signal: AbortSignal.timeout(opts.timeoutMs),
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > opts.maxBytes) {
        res.body.destroy();
        throw new Error(`answer of ${declared} bytes is over REVOCATION_MAX_BYTES (${opts.maxBytes})`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > opts.maxBytes) {
          res.body.destroy();
          throw new Error(`answer is over REVOCATION_MAX_BYTES (${opts.maxBytes})`);
        }
        chunks.push(chunk as Buffer);
      }
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
      const body = Buffer.concat(chunks);
      check(body);
      return body;
    } catch (err) {
      if (err instanceof LtvError) throw err;
      last = (err as Error).message;
    }
  }
  throw new RevocationFetchError(`${url}: ${last} (after ${opts.retries + 1} attempts)`);
}

// OCSP (RFC 6960).

function certId(cert: Cert, issuer: Cert): Buffer {
  return seq([
    seq([oid(LTV_OID.sha1), nullValue()]),
    octetString(sha1(cert.issuerDer)),
    octetString(sha1(issuer.publicKeyBits)),
    integer(Buffer.from(cert.serialHex.length % 2 ? `0${cert.serialHex}` : cert.serialHex, 'hex')),
  ]);
}

export function ocspRequest(cert: Cert, issuer: Cert, nonce: Buffer): Buffer {
  const nonceExt = seq([oid(LTV_OID.ocspNonce), octetString(octetString(nonce))]);
  return seq([seq([seq([seq([certId(cert, issuer)])]), explicit(2, seq([nonceExt]))])]);
}

export interface OcspResult {
  /** The whole OCSPResponse, as it goes into the DSS dictionary. */
  der: Buffer;
  status: 'good' | 'revoked' | 'unknown';
  revokedAt?: Date;
  thisUpdate: Date;
  nextUpdate?: Date;
  /** Certificates the responder sent (a delegated responder's own). */
  certs: Buffer[];
}

/**
 * Reads an OCSPResponse for `cert`: checks it is successful, signed by the issuer or by a responder the issuer
 * delegated (id-kp-OCSPSigning), answers for this certificate, and is current.
 */
export function parseOcspResponse(der: Buffer, cert: Cert, issuer: Cert, now = new Date()): OcspResult {
  const resp = parse(der);
  const status = child(resp, 0, 'responseStatus');
  if (!isUniversal(status, TAG.ENUMERATED) || status.contents[0] !== 0) {
    throw new DerError(`OCSP responder answered status ${status.contents[0] ?? '?'}`);
  }
  const wrapped = tagged(resp, 0);
  if (!wrapped) throw new DerError('OCSP response carries no responseBytes');
  const [type, octets] = children(child(wrapped, 0, 'responseBytes'));
  if (!type || !octets || oidString(type) !== LTV_OID.ocspBasic)
    throw new DerError('not a basic OCSP response');
  const basic = parse(octets.contents);
  const [tbs, algorithm, signature] = children(basic);
  if (!tbs || !algorithm || !signature) throw new DerError('malformed BasicOCSPResponse');
  const certsNode = tagged(basic, 0);
  const certs = certsNode ? children(child(certsNode, 0)).map((c) => c.raw) : [];

  // Who signed: the issuer itself, or a certificate it issued for OCSP signing.
  const signers = [issuer, ...certs.map((c) => readCert(Buffer.from(c)))];
  const signer = signers.find((s) => verifySignature(tbs.raw, algorithm, signature, s.x509.publicKey));
  if (!signer) throw new DerError('OCSP response signature does not verify');
  if (signer !== issuer) {
    const ocspSigning = signer.x509.keyUsage?.includes('1.3.6.1.5.5.7.3.9') ?? false;
    if (!issuedBy(signer, issuer) || !ocspSigning)
      throw new DerError('OCSP response signed by a certificate the issuer did not delegate');
  }

  const fields = children(tbs);
  let i = fields[0]?.cls === 2 && fields[0].tag === 0 ? 1 : 0; // version
  i += 2; // responderID, producedAt
  const responses = fields[i];
  if (!responses) throw new DerError('OCSP response has no responses');
  const wanted = certId(cert, issuer);
  const single = children(responses).find((r) => {
    const id = child(r, 0);
    const parts = children(id);
    // Compare name hash, key hash and serial (the hash algorithm may differ in encoding: NULL or absent).
    const ours = children(parse(wanted));
    return (
      parts[1]?.raw.equals(ours[1]!.raw) &&
      parts[2]?.raw.equals(ours[2]!.raw) &&
      parts[3]?.raw.equals(ours[3]!.raw)
    );
  });
  if (!single) throw new DerError('OCSP response does not answer for the certificate asked about');
  const s = children(single);
  const certStatus = s[1];
  if (!certStatus || certStatus.cls !== 2) throw new DerError('malformed OCSP certStatus');
  const thisUpdate = timeValue(s[2]!);
  const next = s.slice(3).find((n) => n.cls === 2 && n.tag === 0);
  const nextUpdate = next ? timeValue(child(next, 0)) : undefined;
  if (thisUpdate.getTime() > now.getTime() + 5 * 60_000)
    throw new DerError('OCSP response is from the future');
  if (nextUpdate && nextUpdate.getTime() < now.getTime()) throw new DerError('OCSP response is stale');
  const result: OcspResult = {
    der,
    status: certStatus.tag === 0 ? 'good' : certStatus.tag === 1 ? 'revoked' : 'unknown',
    thisUpdate,
    nextUpdate,
    certs: certs.map((c) => Buffer.from(c)),
  };
  if (result.status === 'revoked') result.revokedAt = timeValue(child(certStatus, 0));
  return result;
}

export async function fetchOcsp(
  url: string,
  cert: Cert,
  issuer: Cert,
  opts: RevocationOptions,
): Promise<OcspResult> {
  const nonce = randomBytes(16);
  let result: OcspResult | undefined;
  await fetchBytes(
    url,
    {
      method: 'POST',
      body: ocspRequest(cert, issuer, nonce),
      contentType: 'application/ocsp-request',
      accept: 'application/ocsp-response',
    },
    opts,
    (body) => {
      result = parseOcspResponse(body, cert, issuer);
    },
  );
  return result!;
}

// CRLs (RFC 5280 5).

export interface CrlResult {
  der: Buffer;
  revokedAt?: Date;
  thisUpdate: Date;
  nextUpdate?: Date;
}

/** Reads a CRL issued by `issuer` and looks `cert` up in it. */
export function parseCrl(der: Buffer, cert: Cert, issuer: Cert, now = new Date()): CrlResult {
  const list = parse(der);
  const [tbs, algorithm, signature] = children(list);
  if (!tbs || !algorithm || !signature) throw new DerError('malformed CRL');
  if (!verifySignature(tbs.raw, algorithm, signature, issuer.x509.publicKey))
    throw new DerError('CRL signature does not verify against the issuer');
  const fields = children(tbs);
  let i = isUniversal(fields[0]!, TAG.INTEGER) ? 1 : 0;
  i += 1; // signature algorithm
  const crlIssuer = fields[i++];
  if (!crlIssuer?.raw.equals(issuer.subjectDer)) throw new DerError('CRL is not from the certificate issuer');
  const thisUpdate = timeValue(fields[i++]!);
  let nextUpdate: Date | undefined;
  const maybeNext = fields[i];
  if (maybeNext && (isUniversal(maybeNext, TAG.UTCTime) || isUniversal(maybeNext, TAG.GeneralizedTime))) {
    nextUpdate = timeValue(maybeNext);
    i++;
  }
  if (nextUpdate && nextUpdate.getTime() < now.getTime()) throw new DerError('CRL is stale');
  const revoked = fields[i] && isUniversal(fields[i]!, TAG.SEQUENCE) ? children(fields[i]!) : [];
  const entry = revoked.find((r: DerNode) => integerHex(child(r, 0)) === cert.serialHex);
  return { der, thisUpdate, nextUpdate, ...(entry ? { revokedAt: timeValue(child(entry, 1)) } : {}) };
}

/** CRLs fetched during one extension, by URL: certificates that share a distribution point fetch it once. */
export type CrlCache = Map<string, Promise<Buffer>>;

export async function fetchCrl(
  url: string,
  cert: Cert,
  issuer: Cert,
  opts: RevocationOptions,
  cache: CrlCache = new Map(),
): Promise<CrlResult> {
  let body = cache.get(url);
  if (!body) {
    body = fetchBytes(url, { method: 'GET', accept: 'application/pkix-crl' }, opts, (b) => {
      parseCrl(b, cert, issuer);
    });
    cache.set(url, body);
    body.catch(() => cache.delete(url));
  }
  return parseCrl(await body, cert, issuer);
}

/** What proves one certificate was not revoked: an OCSP response where it names a responder, else a CRL. */
export type Revocation = { kind: 'ocsp'; ocsp: OcspResult } | { kind: 'crl'; crl: CrlResult };

/**
 * Fetches the revocation status of `cert`; throws LtvError when it is revoked (or unknown to its responder) or
 * names neither a responder nor a distribution point, RevocationFetchError when none answered.
 */
export async function revocationOf(
  cert: Cert,
  issuer: Cert,
  opts: RevocationOptions,
  crlCache: CrlCache = new Map(),
): Promise<Revocation> {
  const failures: string[] = [];
  for (const url of cert.ocspUrls) {
    try {
      const ocsp = await fetchOcsp(url, cert, issuer, opts);
      if (ocsp.status === 'revoked')
        throw new LtvError(
          'certificate_revoked',
          `The certificate ${describe(cert)} was revoked at ${ocsp.revokedAt?.toISOString() ?? 'an unknown time'} (OCSP ${url}).`,
        );
      if (ocsp.status === 'unknown') {
        failures.push(`${url}: the responder does not know the certificate`);
        continue;
      }
      return { kind: 'ocsp', ocsp };
    } catch (err) {
      if (err instanceof LtvError) throw err;
      failures.push((err as Error).message);
    }
  }
  for (const url of cert.crlUrls) {
    try {
      const crl = await fetchCrl(url, cert, issuer, opts, crlCache);
      if (crl.revokedAt)
        throw new LtvError(
          'certificate_revoked',
          `The certificate ${describe(cert)} was revoked at ${crl.revokedAt.toISOString()} (CRL ${url}).`,
        );
      return { kind: 'crl', crl };
    } catch (err) {
      if (err instanceof LtvError) throw err;
      failures.push((err as Error).message);
    }
  }
  if (failures.length === 0) {
    throw new LtvError(
      'no_revocation_source',
      `The certificate ${describe(cert)} names neither an OCSP responder nor a CRL distribution point, so its revocation status cannot be embedded (B-LT).`,
    );
  }
  throw new RevocationFetchError(`No revocation data for ${describe(cert)}: ${failures.join('; ')}`);
}
