import { X509Certificate, createHash, verify as cryptoVerify } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';
import { OID } from './cms.ts';
import { ecdsaRawToDer } from './signature-encoding.ts';
import { type Signer, SignerConfigError, certificateKeyType, orderChain } from './signer.ts';

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
export interface CscSignerOptions {
  /** SIGNING_CSC_URL: the API's base, ending in /csc/v2. */
  baseUrl: string;
  token?: string;
  clientId?: string;
  clientSecret?: string;
  /** SIGNING_CSC_OAUTH_TOKEN_URL: the OAuth 2.0 token endpoint, used as given instead of the one /info names. */
  oauthTokenUrl?: string;
  /** SIGNING_CSC_CREDENTIAL_ID; unset: the account's only credential (credentials/list). */
  credentialId?: string;
  pin?: string;
  timeoutMs: number;
  retries: number;
  retryBackoffMs: number;
}

/** A CSC answer is at most this large (a certificate chain is a few kilobytes). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** The service failed or did not answer, after every retry: retryable, like any outage. */
export class CscUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CscUnavailableError';
  }
}

class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const InfoResponse = z.looseObject({
  name: z.string().optional(),
  oauth2: z.string().optional(),
  methods: z.array(z.string()).optional(),
});
const TokenResponse = z.looseObject({ access_token: z.string().min(1), expires_in: z.number().optional() });
const ListResponse = z.looseObject({ credentialIDs: z.array(z.string()) });
const CredentialInfo = z.looseObject({
  key: z.looseObject({ status: z.string().optional(), algo: z.array(z.string()).optional() }),
  cert: z.looseObject({ status: z.string().optional(), certificates: z.array(z.string()).min(1) }),
  authMode: z.string().optional(),
  auth: z.looseObject({ mode: z.string().optional() }).optional(),
  PIN: z.looseObject({ presence: z.union([z.string(), z.boolean()]).optional() }).optional(),
  OTP: z.looseObject({ presence: z.union([z.string(), z.boolean()]).optional() }).optional(),
});
const AuthorizeResponse = z.looseObject({ SAD: z.string().min(1) });
const SignHashResponse = z.looseObject({ signatures: z.array(z.string()).min(1) });

const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Where the client secret is posted: SIGNING_CSC_OAUTH_TOKEN_URL as configured; otherwise `{oauth2}/oauth2/token`
 * with the `oauth2` /info names, but only when that is https on the service's own origin, so that an answer of the
 * service (or of whoever stands in for it) cannot send the secret to another host or over plain http; without
 * `oauth2`, the service's origin.
 */
export function tokenUrl(base: string, oauth2: string | undefined, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const origin = new URL(base).origin;
  if (oauth2 === undefined) return `${origin}/oauth2/token`;
  let named: URL | undefined;
  try {
    named = new URL(oauth2);
  } catch {
    named = undefined;
  }
  if (named?.protocol !== 'https:' || named.origin !== origin) {
    throw new SignerConfigError(
      `CSC signing service: /info names ${JSON.stringify(named?.origin ?? oauth2.slice(0, 100))} for OAuth 2.0, which is not https on the service's origin ${origin}; the client secret is not sent there. Set SIGNING_CSC_OAUTH_TOKEN_URL to the token endpoint to use another.`,
    );
  }
  return `${oauth2.replace(/\/+$/, '')}/oauth2/token`;
}

export async function createCscSigner(opts: CscSignerOptions): Promise<Signer> {
  const base = opts.baseUrl.replace(/\/+$/, '');
  let accessToken: { value: string; expiresAt: number } | undefined = opts.token
    ? { value: opts.token, expiresAt: Number.POSITIVE_INFINITY }
    : undefined;

  /** One POST with JSON (or a form), within the time limit; the body read up to MAX_RESPONSE_BYTES. */
  const post = async (url: string, body: string, contentType: string, bearer?: string): Promise<unknown> => {
    const res = await request(url, {
      method: 'POST',
      headers: {
        'content-type': contentType,
        accept: 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body,
      signal: AbortSignal.timeout(opts.timeoutMs),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw new HttpStatusError(502, `answer larger than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = undefined;
    }
    if (res.statusCode >= 400) {
      const err = json as { error?: unknown; error_description?: unknown } | undefined;
      const why = [err?.error, err?.error_description].filter((v) => typeof v === 'string').join(': ');
      throw new HttpStatusError(
        res.statusCode,
        `HTTP ${res.statusCode}${why ? ` ${why.slice(0, 300)}` : ''}`,
      );
    }
    if (json === undefined) throw new HttpStatusError(502, 'answer is not JSON');
    return json;
  };

  /** A call with retries of what may pass (5xx, time-outs, connection failures); 4xx is a refusal. */
  const call = async <T>(name: string, schema: z.ZodType<T>, attempt: () => Promise<unknown>): Promise<T> => {
    let last = '';
    for (let i = 0; i <= opts.retries; i++) {
      if (i > 0) await sleep(opts.retryBackoffMs * 2 ** (i - 1));
      try {
        const parsed = schema.safeParse(await attempt());
        if (!parsed.success)
          throw new SignerConfigError(`CSC signing service: ${name} answered an unexpected shape.`);
        return parsed.data;
      } catch (err) {
        if (err instanceof SignerConfigError) throw err;
        if (err instanceof HttpStatusError && err.status < 500) {
          throw new SignerConfigError(`CSC signing service refused ${name}: ${err.message}`);
        }
        last = (err as Error).message;
      }
    }
    throw new CscUnavailableError(
      `CSC signing service failed ${name} ${opts.retries + 1} times; last: ${last}`,
    );
  };

  const info = await call('info', InfoResponse, () =>
    post(`${base}/info`, JSON.stringify({ lang: 'en-US' }), 'application/json'),
  );
  if (info.methods && !info.methods.includes('signatures/signHash')) {
    throw new SignerConfigError('CSC signing service does not offer signatures/signHash.');
  }

  const bearer = async (): Promise<string> => {
    if (accessToken && accessToken.expiresAt > Date.now() + 10_000) return accessToken.value;
    if (!opts.clientId || opts.clientSecret === undefined) {
      throw new SignerConfigError(
        'SIGNER=csc needs SIGNING_CSC_TOKEN, or SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET.',
      );
    }
    const url = tokenUrl(base, info.oauth2, opts.oauthTokenUrl);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: opts.clientId,
      client_secret: opts.clientSecret,
    }).toString();
    const token = await call('oauth2/token', TokenResponse, () =>
      post(url, form, 'application/x-www-form-urlencoded'),
    );
    accessToken = {
      value: token.access_token,
      expiresAt: Date.now() + (token.expires_in ?? 3600) * 1000,
    };
    return accessToken.value;
  };

  /** An authenticated API call; a 401 on a token we obtained ourselves gets one fresh token. */
  const api = async <T>(method: string, schema: z.ZodType<T>, body: object): Promise<T> => {
    let renewed = false;
    for (;;) {
      try {
        return await call(method, schema, async () =>
          post(`${base}/${method}`, JSON.stringify(body), 'application/json', await bearer()),
        );
      } catch (err) {
        const expired = err instanceof SignerConfigError && / HTTP 401\b/.test(err.message);
        if (!expired || renewed || opts.token) throw err;
        renewed = true;
        accessToken = undefined;
      }
    }
  };

  let credentialID = opts.credentialId;
  if (!credentialID) {
    const list = await api('credentials/list', ListResponse, { maxResults: 10 });
    if (list.credentialIDs.length !== 1) {
      throw new SignerConfigError(
        `CSC signing service lists ${list.credentialIDs.length} credentials; name one with SIGNING_CSC_CREDENTIAL_ID.`,
      );
    }
    credentialID = list.credentialIDs[0]!;
  }
  const credential = await api('credentials/info', CredentialInfo, {
    credentialID,
    certificates: 'chain',
    certInfo: false,
    authInfo: true,
  });
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
  if ((authMode === 'explicit' || present(credential.PIN)) && opts.pin === undefined) {
    throw new SignerConfigError(`CSC credential ${credentialID} needs a PIN: set SIGNING_CSC_PIN.`);
  }

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
