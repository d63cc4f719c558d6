import { X509Certificate, createHash, verify as cryptoVerify } from 'node:crypto';
import { z } from 'zod';
import { OID } from './cms.ts';
import { type CscCall, openCscApi } from './csc-api.ts';
import { ecdsaRawToDer } from './signature-encoding.ts';
import type { CscSignerOptions } from '../../config/signing-options.ts';
import { type Signer, SignerConfigError, certificateKeyType, orderChain } from './signer-interface.ts';

export type { CscSignerOptions } from '../../config/signing-options.ts';

const ListResponse = z.looseObject({ credentialIDs: z.array(z.string()) });
const CredentialInfo = z.looseObject({
  key: z.looseObject({ status: z.string().optional(), algo: z.array(z.string()).optional() }),
  cert: z.looseObject({ status: z.string().optional(), certificates: z.array(z.string()).min(1) }),
  authMode: z.string().optional(),
  auth: z.looseObject({ mode: z.string().optional() }).optional(),
  PIN: z.looseObject({ presence: z.union([z.string(), z.boolean()]).optional() }).optional(),
  OTP: z.looseObject({ presence: z.union([z.string(), z.boolean()]).optional() }).optional(),
});
type CredentialInfo = z.infer<typeof CredentialInfo>;
const AuthorizeResponse = z.looseObject({ SAD: z.string().min(1) });
const SignHashResponse = z.looseObject({ signatures: z.array(z.string()).min(1) });

const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';

/**
 * A signing key held by a remote signing service speaking the Cloud Signature Consortium API v2 (a licensed
 * trust service provider's QSCD, for one). Only the SHA-256 digest of the signed attributes is sent
 * (credentials/authorize for the signature activation data, then signatures/signHash); the certificate chain
 * comes from credentials/info.
 *
 * Authentication: a bearer token (SIGNING_CSC_TOKEN), or the service's OAuth 2.0 client-credentials grant
 * (SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET) at SIGNING_CSC_OAUTH_TOKEN_URL, or else at
 * `{oauth2}/oauth2/token` with `oauth2` from /info (see `tokenUrl`). The
 * credential's authMode must be `implicit`, or `explicit` with a PIN (SIGNING_CSC_PIN); an OTP or `oauth2code`
 * needs a person at signing time and is refused at load.
 *
 * A 5xx, a time-out or a broken connection is tried again (SIGNING_CSC_RETRIES, backoff doubling from
 * SIGNING_CSC_RETRY_BACKOFF_MS); a 4xx is the service refusing us: a SignerConfigError naming the call.
 */
export async function createCscSigner(opts: CscSignerOptions): Promise<Signer> {
  const api = await openCscApi(opts);
  const credentialID = opts.credentialId || (await onlyCredential(api));
  const credential = await api('credentials/info', CredentialInfo, {
    credentialID,
    certificates: 'chain',
    certInfo: false,
    authInfo: true,
  });
  checkCredential(credentialID, credential, opts.pin);

  const [leaf, ...rest] = credential.cert.certificates.map((c) => Buffer.from(c, 'base64'));
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(leaf!);
  } catch {
    throw new SignerConfigError(`CSC credential ${credentialID}: its certificate cannot be read.`);
  }
  const keyType = certificateKeyType(leaf!);
  const signAlgo =
    keyType === 'ec'
      ? OID.ecdsaWithSha256
      : credential.key.algo?.includes(SHA256_WITH_RSA)
        ? SHA256_WITH_RSA
        : OID.rsaEncryption;

  const sign = async (data: Buffer): Promise<Buffer> => {
    const hash = createHash('sha256').update(data).digest('base64');
    const { SAD } = await api('credentials/authorize', AuthorizeResponse, {
      credentialID,
      numSignatures: 1,
      hashes: [hash],
      hashAlgorithmOID: OID.sha256,
      ...(opts.pin !== undefined ? { PIN: opts.pin } : {}),
    });
    const signed = await api('signatures/signHash', SignHashResponse, {
      credentialID,
      SAD,
      hashes: [hash],
      hashAlgorithmOID: OID.sha256,
      signAlgo,
    });
    let signature: Buffer = Buffer.from(signed.signatures[0]!, 'base64');
    // Some services give ECDSA as r || s: CMS wants the DER form.
    if (keyType === 'ec' && signature[0] !== 0x30) {
      signature = ecdsaRawToDer(signature);
    }
    if (!cryptoVerify('sha256', data, x509.publicKey, signature)) {
      throw new SignerConfigError(
        `CSC credential ${credentialID}: the service's signature does not verify with its certificate.`,
      );
    }
    return signature;
  };

  return {
    kind: 'csc',
    certificate: leaf!,
    chain: orderChain(leaf!, rest),
    development: false,
    subject: x509.subject.replace(/\n/g, ', '),
    keyType,
    sign,
  };
}

/** Without SIGNING_CSC_CREDENTIAL_ID, the service must list exactly one credential. */
async function onlyCredential(api: CscCall): Promise<string> {
  const list = await api('credentials/list', ListResponse, { maxResults: 10 });
  if (list.credentialIDs.length !== 1) {
    throw new SignerConfigError(
      `CSC signing service lists ${list.credentialIDs.length} credentials; name one with SIGNING_CSC_CREDENTIAL_ID.`,
    );
  }
  return list.credentialIDs[0]!;
}

/** The key enabled, the certificate valid, and an authorisation mode that needs no person at signing time. */
function checkCredential(credentialID: string, credential: CredentialInfo, pin: string | undefined): void {
  if (credential.key.status && credential.key.status !== 'enabled')
    throw new SignerConfigError(`CSC credential ${credentialID}: its key is ${credential.key.status}.`);
  if (credential.cert.status && credential.cert.status !== 'valid')
    throw new SignerConfigError(
      `CSC credential ${credentialID}: its certificate is ${credential.cert.status}.`,
    );
  const authMode = credential.authMode ?? credential.auth?.mode ?? 'implicit';
  const present = (p?: { presence?: string | boolean }) => p?.presence === true || p?.presence === 'true';
  if (authMode === 'oauth2code' || present(credential.OTP)) {
    throw new SignerConfigError(
      `CSC credential ${credentialID} needs a person to authorise each signature (${authMode === 'oauth2code' ? 'oauth2code' : 'OTP'}); use a credential with authMode implicit or explicit with a PIN.`,
    );
  }
  if ((authMode === 'explicit' || present(credential.PIN)) && pin === undefined) {
    throw new SignerConfigError(`CSC credential ${credentialID} needs a PIN: set SIGNING_CSC_PIN.`);
  }
}
