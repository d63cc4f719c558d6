import {
  type KeyObject,
  X509Certificate,
  createPrivateKey,
  sign as cryptoSign,
  generateKeyPairSync,
  randomBytes,
} from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';
import type { CscSignerOptions } from './csc-signer.ts';
import type { Pkcs11SignerOptions } from './pkcs11-signer.ts';

/** Where the signing key is: a PKCS#12 file beside the process, an HSM (PKCS#11) or a remote service (CSC v2). */
export const SIGNER_KINDS = ['p12', 'pkcs11', 'csc'] as const;
export type SignerKind = (typeof SIGNER_KINDS)[number];

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

export const DEV_P12_FILE = 'dev-signing-certificate.p12';
/** Protects nothing (the file sits beside the data it would sign); PKCS#12 needs some password. */
export const DEV_P12_PASSWORD = 'wathiq-development';
const DEV_SUBJECT = 'Wathiq development signing certificate (not for production)';

export interface CreateSignerOptions {
  /** SIGNER; default p12. */
  kind?: SignerKind;
  /** SIGNER=pkcs11: the module, token, PIN and key (SIGNING_PKCS11_*). */
  pkcs11?: Pkcs11SignerOptions;
  /** SIGNER=csc: the Cloud Signature Consortium v2 service (SIGNING_CSC_*). */
  csc?: CscSignerOptions;
  /** PKCS#12 (.p12/.pfx) with the signing key and certificate chain (SIGNING_P12_PATH). */
  p12Path?: string;
  p12Password?: string;
  /** Where the development certificate is created once and kept (under DATA_DIR). */
  devCertDir: string;
  /** In production a real certificate is required and the development one is refused. */
  production: boolean;
}

/**
 * Loads the signing identity of the configured kind: an HSM's key and certificates (PKCS#11), a remote signing
 * service's credential (CSC), or the PKCS#12 file — the configured one, or else the development certificate
 * (created on first use and reused afterwards). Refuses to run production on the development certificate.
 */
export async function createSigner(opts: CreateSignerOptions): Promise<Signer> {
  if (opts.kind === 'pkcs11') {
    if (!opts.pkcs11) throw new SignerConfigError('SIGNER=pkcs11 needs SIGNING_PKCS11_MODULE.');
    const { createPkcs11Signer } = await import('./pkcs11-signer.ts');
    return createPkcs11Signer(opts.pkcs11);
  }
  if (opts.kind === 'csc') {
    if (!opts.csc) throw new SignerConfigError('SIGNER=csc needs SIGNING_CSC_URL.');
    const { createCscSigner } = await import('./csc-signer.ts');
    return createCscSigner(opts.csc);
  }
  return createP12Signer(opts);
}

async function createP12Signer(opts: CreateSignerOptions): Promise<Signer> {
  if (opts.p12Path) {
    let der: Buffer;
    try {
      der = await readFile(opts.p12Path);
    } catch (err) {
      throw new SignerConfigError(
        `SIGNING_P12_PATH ${opts.p12Path} cannot be read: ${(err as Error).message}`,
      );
    }
    const signer = signerFromP12(der, opts.p12Password ?? '');
    if (opts.production && signer.development) {
      throw new SignerConfigError(
        'SIGNING_P12_PATH holds the development certificate, which is refused in production.',
      );
    }
    return signer;
  }
  if (opts.production) {
    throw new SignerConfigError(
      'No signing certificate: set SIGNING_P12_PATH and SIGNING_P12_PASSWORD. The development certificate is refused in production.',
    );
  }
  const file = path.join(opts.devCertDir, DEV_P12_FILE);
  const existing = await readFile(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing) return signerFromP12(existing, DEV_P12_PASSWORD);

  await mkdir(opts.devCertDir, { recursive: true });
  const p12 = createDevelopmentP12();
  // Written aside and linked into place: of two processes racing here, one wins and both use its file.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temp, p12, { mode: 0o600 });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(temp, { force: true });
  }
  return signerFromP12(await readFile(file), DEV_P12_PASSWORD);
}

/** Reads a PKCS#12 (as written by OpenSSL 1.x/3.x, Windows or forge) into a Signer. */
export function signerFromP12(der: Buffer, password: string): Signer {
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der.toString('binary')), false, password);
  } catch (err) {
    throw new SignerConfigError(
      `The PKCS#12 file cannot be opened (wrong password or format): ${(err as Error).message}`,
    );
  }
  const bags = (type: string): forge.pkcs12.Bag[] => p12.getBags({ bagType: type })[type] ?? [];
  const oids = forge.pki.oids as Record<string, string>;
  const keyBags = [...bags(oids.pkcs8ShroudedKeyBag ?? ''), ...bags(oids.keyBag ?? '')];
  const certBags = bags(oids.certBag ?? '');
  const keyBag = keyBags.find((b) => b.key);
  if (!keyBag?.key)
    throw new SignerConfigError('The PKCS#12 file holds no private key (or one forge cannot read).');
  const privateKey = createPrivateKey(forge.pki.privateKeyToPem(keyBag.key));

  const certs = certBags.flatMap((b) =>
    b.cert ? [Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(b.cert)).getBytes(), 'binary')] : [],
  );
  const leaf = certs.find((c) => new X509Certificate(c).checkPrivateKey(privateKey));
  if (!leaf) throw new SignerConfigError('The PKCS#12 file has no certificate for its private key.');
  const x509 = new X509Certificate(leaf);
  return keyObjectSigner(
    {
      certificate: leaf,
      chain: orderChain(
        leaf,
        certs.filter((c) => !c.equals(leaf)),
      ),
      development: x509.subject.includes(DEV_SUBJECT),
      subject: x509.subject.replace(/\n/g, ', '),
    },
    privateKey,
  );
}

/** A signer whose key is a KeyObject in this process (the PKCS#12 file's, or a test's). */
export function keyObjectSigner(
  identity: Pick<Signer, 'certificate' | 'chain' | 'subject' | 'development'>,
  privateKey: KeyObject,
): Signer {
  return {
    ...identity,
    kind: 'p12',
    keyType: keyTypeOf(privateKey),
    sign: (data) => Promise.resolve(cryptoSign('sha256', data, privateKey)),
  };
}

function keyTypeOf(key: KeyObject): 'rsa' | 'ec' {
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

function createDevelopmentP12(): Buffer {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600_000);
  const attrs = [
    { name: 'commonName', value: DEV_SUBJECT },
    { name: 'organizationName', value: 'Wathiq' },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  cert.sign(key, forge.md.sha256.create());
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, [cert], DEV_P12_PASSWORD, {
    algorithm: 'aes256',
    friendlyName: 'wathiq-dev',
  });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}
