import { type KeyObject, X509Certificate, createHash, verify } from 'node:crypto';
import {
  DerError,
  type DerNode,
  TAG,
  bitStringBytes,
  child,
  children,
  isUniversal,
  oidString,
  parse,
  tagged,
} from './der.ts';

export const LTV_OID = {
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  crlDistributionPoints: '2.5.29.31',
  ocsp: '1.3.6.1.5.5.7.48.1',
  caIssuers: '1.3.6.1.5.5.7.48.2',
  ocspNoCheck: '1.3.6.1.5.5.7.48.1.5',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  ocspNonce: '1.3.6.1.5.5.7.48.1.2',
  sha1: '1.3.14.3.2.26',
} as const;

/** A certificate with the parts long-term validation needs. */
export interface Cert {
  der: Buffer;
  x509: X509Certificate;
  /** The DER of the subject and issuer Names, as encoded in the certificate. */
  subjectDer: Buffer;
  issuerDer: Buffer;
  /** The subjectPublicKey BIT STRING's bits (what an OCSP CertID hashes). */
  publicKeyBits: Buffer;
  serialHex: string;
  ocspUrls: string[];
  crlUrls: string[];
  caIssuerUrls: string[];
  /** id-pkix-ocsp-nocheck: an OCSP responder certificate that needs no revocation check of its own. */
  ocspNoCheck: boolean;
}

function extensions(tbs: DerNode): { id: string; value: Buffer }[] {
  const ext = tagged(tbs, 3);
  if (!ext) return [];
  return children(child(ext, 0, 'extensions')).map((e) => {
    const parts = children(e);
    const value = parts[parts.length - 1];
    if (!value || !isUniversal(value, TAG.OCTET_STRING)) throw new DerError('malformed extension');
    return { id: oidString(child(e, 0, 'extension id')), value: value.contents };
  });
}

/** URIs (GeneralName [6]) anywhere under a node. */
function uris(node: DerNode, depth = 0): string[] {
  if (depth > 8) return [];
  if (node.cls === 2 && node.tag === 6 && !node.constructed) return [node.contents.toString('latin1')];
  if (!node.constructed) return [];
  return children(node).flatMap((c) => uris(c, depth + 1));
}

const httpOnly = (list: string[]) => list.filter((u) => /^https?:\/\//i.test(u));

export function readCert(der: Buffer): Cert {
  const x509 = new X509Certificate(der);
  const tbs = child(parse(der), 0, 'tbsCertificate');
  const fields = children(tbs);
  const v = fields[0]?.cls === 2 ? 1 : 0;
  const issuer = fields[v + 2];
  const subject = fields[v + 4];
  const spki = fields[v + 5];
  if (!issuer || !subject || !spki) throw new DerError('malformed certificate');
  const ocspUrls: string[] = [];
  const caIssuerUrls: string[] = [];
  let crlUrls: string[] = [];
  let ocspNoCheck = false;
  for (const e of extensions(tbs)) {
    if (e.id === LTV_OID.authorityInfoAccess) {
      for (const desc of children(parse(e.value))) {
        const method = oidString(child(desc, 0));
        const location = uris(child(desc, 1));
        if (method === LTV_OID.ocsp) ocspUrls.push(...location);
        if (method === LTV_OID.caIssuers) caIssuerUrls.push(...location);
      }
    } else if (e.id === LTV_OID.crlDistributionPoints) {
      crlUrls = uris(parse(e.value));
    } else if (e.id === LTV_OID.ocspNoCheck) ocspNoCheck = true;
  }
  return {
    der,
    x509,
    subjectDer: subject.raw,
    issuerDer: issuer.raw,
    publicKeyBits: bitStringBytes(child(spki, 1, 'subjectPublicKey')),
    serialHex: x509.serialNumber.toUpperCase().replace(/^(00)+(?=.)/, ''),
    ocspUrls: httpOnly(ocspUrls),
    crlUrls: httpOnly(crlUrls),
    caIssuerUrls: httpOnly(caIssuerUrls),
    ocspNoCheck,
  };
}

/**
 * Signed by its own key under its own name: a trust anchor (or the development certificate). Not
 * `checkIssued`, which also asks for keyCertSign, which a self-signed end-entity certificate does not have.
 */
export const isSelfSigned = (c: Cert) => c.subjectDer.equals(c.issuerDer) && c.x509.verify(c.x509.publicKey);

export const issuedBy = (c: Cert, issuer: Cert) =>
  c.issuerDer.equals(issuer.subjectDer) && c.x509.verify(issuer.x509.publicKey);

export const sha1 = (b: Buffer) => createHash('sha1').update(b).digest();

export function describe(c: Cert): string {
  return `${c.x509.subject.replace(/\n/g, ', ')} (serial ${c.serialHex})`;
}

const SIGNATURE_HASH: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};

/** Checks a signature (an AlgorithmIdentifier and a BIT STRING) over `signed` with `key`. */
export function verifySignature(
  signed: Buffer,
  algorithm: DerNode,
  signature: DerNode,
  key: KeyObject,
): boolean {
  const hash = SIGNATURE_HASH[oidString(child(algorithm, 0, 'signature algorithm'))];
  if (!hash) return false;
  try {
    return verify(hash, signed, key, bitStringBytes(signature));
  } catch {
    return false;
  }
}
