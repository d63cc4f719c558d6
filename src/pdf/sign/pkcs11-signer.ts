import { X509Certificate, createHash, verify as cryptoVerify } from 'node:crypto';
import type * as Pkcs11Types from 'pkcs11js';
import { digestInfoSha256, ecdsaRawToDer } from './signature-encoding.ts';
import type { Pkcs11SignerOptions } from '../../config/signing-options.ts';
import { type Signer, SignerConfigError, certificateKeyType, orderChain } from './signer-interface.ts';
import {
  type Handle,
  type Pkcs11Token,
  closeQuietly,
  describe,
  findObjects,
  login,
  openSession,
  openToken,
} from './pkcs11-token.ts';

export type { Pkcs11SignerOptions } from '../../config/signing-options.ts';

/** CKS_RO_USER_FUNCTIONS and CKS_RW_USER_FUNCTIONS: a session of a logged-in application. */
const USER_STATES = new Set([1, 3]);

/** The session holding the signer's login; replaced when the token forgot the login. */
interface Anchor {
  session: Handle;
}

interface Certificate {
  id: Buffer | undefined;
  label: string | undefined;
  der: Buffer;
}

/**
 * A signing key on a PKCS#11 token (an HSM, a smart card, SoftHSM in the tests). The key never leaves the token:
 * the token is given the SHA-256 digest of the signed attributes (CKM_RSA_PKCS over a DigestInfo, or CKM_ECDSA),
 * and the certificate and its chain are read from the token's certificate objects.
 *
 * One module initialisation per process and module path; one login per signer, kept by a session held open for
 * the signer's life (a token's login belongs to the application while any of its sessions is open); each
 * signature in a session of its own, so concurrent finalizations do not share an operation.
 */
export async function createPkcs11Signer(opts: Pkcs11SignerOptions): Promise<Signer> {
  const token = openToken(opts);
  const anchor: Anchor = { session: await login(token) };
  try {
    return await identify(token, anchor);
  } catch (err) {
    closeQuietly(token, anchor.session);
    throw err;
  }
}

/** Finds the key and its certificates, and proves they belong together with one signature. */
async function identify(token: Pkcs11Token, anchor: Anchor): Promise<Signer> {
  const { p, opts } = token;
  const keyTemplate: Pkcs11Types.Template = [{ type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }];
  if (opts.keyLabel !== undefined) keyTemplate.push({ type: p.CKA_LABEL, value: opts.keyLabel });
  if (opts.keyId !== undefined) keyTemplate.push({ type: p.CKA_ID, value: Buffer.from(opts.keyId, 'hex') });
  const key = privateKey(token, anchor.session, keyTemplate);
  const certs = certificates(token, anchor.session);
  // The certificate: the one with the key's CKA_ID (else its label); the others on the token may be its chain.
  const leaf =
    certs.find((c) => key.id && key.id.length > 0 && c.id?.equals(key.id)) ??
    certs.find((c) => key.label !== undefined && c.label === key.label);
  if (!leaf) {
    throw new SignerConfigError(
      `The PKCS#11 token holds no certificate for its private key (a certificate object with the key's CKA_ID or label).`,
    );
  }
  const keyType = certificateKeyType(leaf.der);
  const expected = keyType === 'rsa' ? p.CKK_RSA : p.CKK_EC;
  if (key.ckKeyType !== undefined && key.ckKeyType !== expected)
    throw new SignerConfigError('The PKCS#11 private key is not of the certificate key type.');

  const x509 = new X509Certificate(leaf.der);
  const others = certs.filter((c) => c !== leaf).map((c) => c.der);
  const signDigest = digestSigner(token, anchor, keyTemplate, keyType);
  const signer: Signer = {
    kind: 'pkcs11',
    certificate: leaf.der,
    chain: orderChain(leaf.der, others),
    development: false,
    subject: x509.subject.replace(/\n/g, ', '),
    keyType,
    sign: (data) => signDigest(createHash('sha256').update(data).digest()),
  };

  // The key must be the certificate's: one signature now rather than a file no validator accepts later.
  const probe = Buffer.from('Wathiq signing key check');
  const signature = await signer.sign(probe);
  if (!cryptoVerify('sha256', probe, x509.publicKey, signature)) {
    throw new SignerConfigError("The PKCS#11 private key does not match the certificate with the key's id.");
  }
  return signer;
}

/** The one private key the template finds, with its CKA_ID, label and key type. */
function privateKey(
  token: Pkcs11Token,
  session: Handle,
  keyTemplate: Pkcs11Types.Template,
): { id: Buffer | undefined; label: string | undefined; ckKeyType: number | undefined } {
  const { lib, p, opts } = token;
  const keys = findObjects(lib, session, keyTemplate);
  const named = [
    opts.keyLabel !== undefined && `label "${opts.keyLabel}"`,
    opts.keyId !== undefined && `id ${opts.keyId}`,
  ]
    .filter(Boolean)
    .join(' and ');
  if (keys.length !== 1) {
    throw new SignerConfigError(
      keys.length === 0
        ? `The PKCS#11 token has no private key${named ? ` with ${named}` : ''} (SIGNING_PKCS11_KEY_LABEL / SIGNING_PKCS11_KEY_ID).`
        : `The PKCS#11 token has ${keys.length} private keys${named ? ` with ${named}` : ''}; name one with SIGNING_PKCS11_KEY_LABEL or SIGNING_PKCS11_KEY_ID.`,
    );
  }
  const attrs = lib.C_GetAttributeValue(session, keys[0]!, [
    { type: p.CKA_ID },
    { type: p.CKA_LABEL },
    { type: p.CKA_KEY_TYPE },
  ]);
  return {
    id: attrs[0]?.value,
    label: attrs[1]?.value?.toString(),
    ckKeyType: attrs[2]?.value?.readUIntLE(0, 4),
  };
}

/** Every certificate object on the token. */
function certificates(token: Pkcs11Token, session: Handle): Certificate[] {
  const { lib, p } = token;
  return findObjects(lib, session, [{ type: p.CKA_CLASS, value: p.CKO_CERTIFICATE }]).map((h) => {
    const [id, label, value] = lib.C_GetAttributeValue(session, h, [
      { type: p.CKA_ID },
      { type: p.CKA_LABEL },
      { type: p.CKA_VALUE },
    ]);
    return {
      id: id?.value,
      label: label?.value?.toString(),
      der: value?.value as Buffer,
    };
  });
}

/** One signature in a session of its own; logs in again when the token forgot the login (re-inserted, reset). */
function digestSigner(
  token: Pkcs11Token,
  anchor: Anchor,
  keyTemplate: Pkcs11Types.Template,
  keyType: Signer['keyType'],
): (digest: Buffer) => Promise<Buffer> {
  const { lib, p } = token;
  return async (digest) => {
    const session = openSession(token);
    try {
      if (!USER_STATES.has(lib.C_GetSessionInfo(session).state)) {
        closeQuietly(token, anchor.session);
        anchor.session = await login(token);
      }
      const found = findObjects(lib, session, keyTemplate);
      if (found.length !== 1)
        throw new SignerConfigError('The PKCS#11 private key is no longer on the token.');
      const mechanism = keyType === 'rsa' ? p.CKM_RSA_PKCS : p.CKM_ECDSA;
      const input = keyType === 'rsa' ? digestInfoSha256(digest) : digest;
      lib.C_SignInit(session, { mechanism }, found[0]!);
      const out = await lib.C_SignAsync(session, input, Buffer.alloc(1024));
      return keyType === 'rsa' ? Buffer.from(out) : ecdsaRawToDer(out);
    } catch (err) {
      if (err instanceof SignerConfigError) throw err;
      throw new SignerConfigError(`The PKCS#11 token did not sign: ${describe(err)}`);
    } finally {
      closeQuietly(token, session);
    }
  };
}
