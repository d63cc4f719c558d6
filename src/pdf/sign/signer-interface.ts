import { X509Certificate, type KeyObject } from 'node:crypto';
import type { SignerKind } from '../../config/signing-options.ts';

export { SIGNER_KINDS, type SignerKind } from '../../config/signing-options.ts';

/**
 * What every signer is and shares (the PKCS#12 file's, an HSM's, a signing service's): the signer modules import
 * this file, never each other; src/pdf/sign/signer.ts picks one by kind.
 */

/**
 * The certificate and key that seal final PDFs. The certificates are plain data (they go to the compose thread);
 * the key is reached only through `sign`.
 */
export interface Signer {
  kind: SignerKind;
  /** DER of the signing certificate. */
  certificate: Buffer;
  /** DER of the certificates to embed after it (intermediates), issuer order. */
  chain: Buffer[];
  /** True for the self-signed certificate made when no PKCS#12 is configured. */
  development: boolean;
  /** Subject of the certificate, for logs and the signature dictionary. */
  subject: string;
  /** The key's algorithm: RSA (PKCS#1 v1.5 signatures) or EC (ECDSA, P-256). */
  keyType: 'rsa' | 'ec';
  /**
   * Signs `data` (the DER of the CMS signed attributes) with SHA-256; RSA PKCS#1 v1.5 or a DER ECDSA signature.
   * A key outside the process (HSM, remote service) is sent only the SHA-256 digest of `data`.
   */
  sign(data: Buffer): Promise<Buffer>;
}

/**
 * The signer cannot sign: a certificate or key missing, unreadable or refused, a token absent or locked, a wrong
 * PIN, a signing service that refuses us. Retryable (the operator can fix it) until the finalization's retry
 * policy runs out; then the document reads `finalization.state = "failed"` with this message.
 */
export class SignerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignerConfigError';
  }
}

/** The key type of a key this process holds. */
export function keyTypeOf(key: KeyObject): 'rsa' | 'ec' {
  const type = key.asymmetricKeyType;
  if (type === 'rsa' || type === 'ec') return type;
  throw new SignerConfigError(
    `signing keys of type ${type ?? 'unknown'} are not supported (RSA or EC P-256)`,
  );
}

/** A leaf certificate's key type, for signers that hold no KeyObject (the key is on a token or a service). */
export function certificateKeyType(certificate: Buffer): 'rsa' | 'ec' {
  return keyTypeOf(new X509Certificate(certificate).publicKey);
}

/** The issuers of the leaf, nearest first; certificates that are not in its path are left out. */
export function orderChain(leaf: Buffer, others: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let current = new X509Certificate(leaf);
  const pool = others.map((d) => ({ der: d, x509: new X509Certificate(d) }));
  for (let i = 0; i < 10; i++) {
    const issuer = pool.find(
      (p) => !out.includes(p.der) && current.checkIssued(p.x509) && current.verify(p.x509.publicKey),
    );
    if (!issuer || issuer.x509.fingerprint256 === current.fingerprint256) break;
    out.push(issuer.der);
    current = issuer.x509;
  }
  return out;
}
