import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';
import { type Signer, keyObjectSigner, signerFromP12 } from '../../src/pdf/sign/signer.ts';

export interface TestIdentity {
  certPem: string;
  keyPem: string;
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
}

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    forgePrivate: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()),
  };
}

function issue(subjectCn: string, issuer: TestIdentity | undefined, extensions: object[]): TestIdentity {
  const { forgePublic, forgePrivate } = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forgePublic;
  cert.serialNumber = `01${randomBytes(12).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 5 * 365 * 24 * 3600_000);
  const subject = [
    { name: 'commonName', value: subjectCn },
    { name: 'organizationName', value: 'Wathiq tests' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : subject);
  cert.setExtensions(extensions);
  cert.sign(issuer ? issuer.key : forgePrivate, forge.md.sha256.create());
  return {
    cert,
    key: forgePrivate,
    certPem: forge.pki.certificateToPem(cert),
    keyPem: forge.pki.privateKeyToPem(forgePrivate),
  };
}

export interface TestPki {
  dir: string;
  ca: TestIdentity;
  leaf: TestIdentity;
  tsa: TestIdentity;
  /** PKCS#12 of the leaf and the CA, written by OpenSSL (AES-256, PBKDF2: the OpenSSL 3 default). */
  p12Path: string;
  p12Password: string;
  signer: Signer;
  /** NSS database (for `pdfsig -nssdir`) that trusts the test CA. */
  nssDir: string;
}

/**
 * A test CA, a document-signing leaf and a time-stamping certificate it issued, the leaf as an OpenSSL PKCS#12,
 * and an NSS trust store holding the CA (certutil from libnss3-tools).
 */
export async function createTestPki(dir: string): Promise<TestPki> {
  await mkdir(dir, { recursive: true });
  const ca = issue('Wathiq Test Root CA', undefined, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const leaf = issue('Wathiq Test Document Signing', ca, [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const tsa = issue('Wathiq Test Time-Stamping Authority', ca, [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
    { name: 'extKeyUsage', timeStamping: true, critical: true },
  ]);
  const file = (n: string) => path.join(dir, n);
  await writeFile(file('ca.pem'), ca.certPem);
  await writeFile(file('leaf.pem'), leaf.certPem);
  await writeFile(file('leaf-key.pem'), leaf.keyPem);
  const p12Password = 'test-p12-password';
  execFileSync('openssl', [
    'pkcs12',
    '-export',
    '-inkey',
    file('leaf-key.pem'),
    '-in',
    file('leaf.pem'),
    '-certfile',
    file('ca.pem'),
    '-passout',
    `pass:${p12Password}`,
    '-out',
    file('leaf.p12'),
  ]);
  const nssDir = file('nss');
  await mkdir(nssDir, { recursive: true });
  execFileSync('certutil', ['-N', '-d', `sql:${nssDir}`, '--empty-password']);
  execFileSync('certutil', [
    '-A',
    '-d',
    `sql:${nssDir}`,
    '-n',
    'wathiq-test-ca',
    '-t',
    'CT,C,C',
    '-i',
    file('ca.pem'),
  ]);
  const { readFileSync } = await import('node:fs');
  const signer = signerFromP12(readFileSync(file('leaf.p12')), p12Password);
  return { dir, ca, leaf, tsa, p12Path: file('leaf.p12'), p12Password, signer, nssDir };
}

export function certDer(identity: TestIdentity): Buffer {
  return Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(identity.cert)).getBytes(), 'binary');
}

/** A self-signed document-signing identity: a key and its certificate. */
export function selfSignedIdentity(cn: string): TestIdentity {
  return issue(cn, undefined, [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true },
  ]);
}

/** A self-signed signer that is not the development certificate (a "third party" that signed a document). */
export function selfSignedSigner(cn: string): Signer {
  const id = selfSignedIdentity(cn);
  return keyObjectSigner(
    { certificate: certDer(id), chain: [], development: false, subject: `CN=${cn}` },
    createPrivateKey(id.keyPem),
  );
}
