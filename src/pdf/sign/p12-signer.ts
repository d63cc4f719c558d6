import {
  X509Certificate,
  createPrivateKey,
  sign as cryptoSign,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';
import { DEV_P12_FILE } from '../../config/signing-options.ts';
import { SignerConfigError, keyTypeOf, orderChain, type Signer } from './signer-interface.ts';

export { DEV_P12_FILE } from '../../config/signing-options.ts';
/** Protects nothing (the file sits beside the data it would sign); PKCS#12 needs some password. */
export const DEV_P12_PASSWORD = 'wathiq-development';
const DEV_SUBJECT = 'Wathiq development signing certificate (not for production)';

/** The PKCS#12 signer's part of the signer options (SIGNER=p12, the default). */
export interface P12SignerOptions {
  /** PKCS#12 (.p12/.pfx) with the signing key and certificate chain (SIGNING_P12_PATH). */
  p12Path?: string;
  p12Password?: string;
  /** Where the development certificate is created once and kept (under DATA_DIR). */
  devCertDir: string;
  /** In production a real certificate is required and the development one is refused. */
  production: boolean;
}

/** The configured PKCS#12 file, or else the development certificate (created on first use, reused afterwards). */
export async function createP12Signer(opts: P12SignerOptions): Promise<Signer> {
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
