import path from 'node:path';
import { z } from 'zod';
import { SIGNATURE_LEVELS } from '../domain/signature-levels.ts';
import { httpUrl, optionalString } from './fields.ts';
import { DEV_P12_FILE, SIGNER_KINDS, type SigningConfig } from './signing-options.ts';
import { defineSlice, type ConfigRole, type LoadContext, type SliceEnv } from './slice.ts';

const int = (min: number, max: number, fallback: number, what: string) =>
  z.coerce.number().int().min(min).max(max).default(fallback).describe(what);

const env = {
  SIGNER: z
    .enum(SIGNER_KINDS)
    .default('p12')
    .describe(
      'where the signing key lives: p12 (a file: SIGNING_P12_PATH, or the development certificate) | pkcs11 (an HSM) | csc (a remote signing service, CSC API v2)',
    ),
  SIGNING_P12_PATH: optionalString.describe(
    'the PKCS#12 (.p12/.pfx) with the signing key and its certificate chain that signs final PDFs',
  ),
  SIGNING_P12_PASSWORD: z.string().optional().describe('the password of that PKCS#12'),
  SIGNING_PKCS11_MODULE: optionalString.describe(
    "pkcs11: the HSM vendor's PKCS#11 library, e.g. /usr/lib/softhsm/libsofthsm2.so",
  ),
  SIGNING_PKCS11_TOKEN_LABEL: optionalString.describe(
    "pkcs11: the token's label; or SIGNING_PKCS11_SLOT; neither: the only token",
  ),
  SIGNING_PKCS11_SLOT: z.coerce.number().int().min(0).optional().describe('pkcs11: the slot id'),
  SIGNING_PKCS11_PIN: z.string().optional().describe('pkcs11: the user PIN; or SIGNING_PKCS11_PIN_FILE'),
  SIGNING_PKCS11_PIN_FILE: optionalString.describe(
    'pkcs11: a file holding the PIN, read at each login; a refused PIN is not tried again until it changes, so the token does not lock',
  ),
  SIGNING_PKCS11_KEY_LABEL: optionalString.describe(
    "pkcs11: the private key's CKA_LABEL, and/or SIGNING_PKCS11_KEY_ID; neither: the token's only private key",
  ),
  SIGNING_PKCS11_KEY_ID: z
    .string()
    .regex(/^(?:[0-9a-fA-F]{2})+$/, "hex digits (the key object's CKA_ID)")
    .optional()
    .describe("pkcs11: the private key's CKA_ID in hex; its certificate is the object with the same id"),
  SIGNING_CSC_URL: httpUrl()
    .optional()
    .describe("csc: the service's API base, ending in /csc/v2 (https in production)"),
  SIGNING_CSC_TOKEN: optionalString.describe(
    'csc: a bearer token; or the client-credentials grant with SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET',
  ),
  SIGNING_CSC_CLIENT_ID: optionalString.describe('csc: the OAuth 2.0 client id'),
  SIGNING_CSC_CLIENT_SECRET: optionalString.describe('csc: the OAuth 2.0 client secret'),
  SIGNING_CSC_OAUTH_TOKEN_URL: httpUrl()
    .optional()
    .describe(
      "csc: the OAuth 2.0 token endpoint that gets the client secret; unset: the oauth2 of /info, only if https on SIGNING_CSC_URL's origin",
    ),
  SIGNING_CSC_CREDENTIAL_ID: optionalString.describe(
    "csc: the signing credential; unset: the account's only one (credentials/list)",
  ),
  SIGNING_CSC_PIN: z
    .string()
    .optional()
    .describe("csc: the credential's PIN when its authMode is explicit (OTP and oauth2code are refused)"),
  SIGNING_CSC_TIMEOUT_MS: int(100, 120_000, 10_000, 'csc: the deadline of one call to the service'),
  SIGNING_CSC_RETRIES: int(0, 10, 3, 'csc: further tries after a 5xx, a time-out or a broken connection'),
  SIGNING_CSC_RETRY_BACKOFF_MS: int(
    0,
    60_000,
    500,
    'csc: the first wait between tries; each further wait doubles',
  ),
  TSA_URL: httpUrl()
    .optional()
    .describe(
      'an RFC 3161 time-stamp authority (e.g. http://timestamp.digicert.com) for PAdES B-T and above; unset: no time-stamp',
    ),
  SIGNATURE_LEVEL: z
    .enum(SIGNATURE_LEVELS)
    .optional()
    .describe(
      'the PAdES baseline level of final PDFs: B-B, B-T, B-LT or B-LTA; B-T and above need TSA_URL, and B-LT and B-LTA fetch OCSP responses and CRLs (docs/signed-pdf.md "Signature levels")',
    ),
  REVOCATION_TIMEOUT_MS: int(
    100,
    120_000,
    10_000,
    'per OCSP or CRL request, inside the finalization activity',
  ),
  REVOCATION_RETRIES: int(
    0,
    10,
    2,
    'further attempts after a failed OCSP or CRL request, with back-off; then the activity retries',
  ),
  REVOCATION_MAX_BYTES: int(
    1024,
    209_715_200,
    10_485_760,
    'the largest OCSP response or CRL read (1 KiB-200 MiB)',
  ),
  ARCHIVE_RENEWAL_MARGIN_DAYS: int(
    1,
    3650,
    30,
    "B-LTA: a fresh document time-stamp is added when the last one's certificate expires within this many days",
  ),
  ARCHIVE_RENEWAL_INTERVAL_HOURS: int(1, 744, 24, 'how often the archive renewal Temporal Schedule runs'),
  ARCHIVE_RENEWAL_BATCH_SIZE: int(
    1,
    10_000,
    100,
    'files renewed per run at most; the next run takes the rest',
  ),
};

type SigningEnv = SliceEnv<typeof env>;

/**
 * The variables a signer kind needs, checked where PDFs are signed (the worker), named by the refusal. The
 * token's or service's answers (a wrong PIN, an unknown credential) are checked when the worker loads the signer.
 */
function checkSigner(e: SigningEnv, role: ConfigRole): string[] {
  if (role === 'api') return [];
  const issues: string[] = [];
  if (e.SIGNER === 'pkcs11') {
    if (e.SIGNING_PKCS11_MODULE === undefined)
      issues.push('SIGNING_PKCS11_MODULE: required when SIGNER=pkcs11 (the PKCS#11 library of the HSM)');
    if (e.SIGNING_PKCS11_PIN === undefined && e.SIGNING_PKCS11_PIN_FILE === undefined)
      issues.push('SIGNING_PKCS11_PIN: required when SIGNER=pkcs11, or SIGNING_PKCS11_PIN_FILE');
    if (e.SIGNING_PKCS11_SLOT !== undefined && e.SIGNING_PKCS11_TOKEN_LABEL !== undefined)
      issues.push('SIGNING_PKCS11_SLOT: set it or SIGNING_PKCS11_TOKEN_LABEL, not both');
  }
  if (e.SIGNER === 'csc') {
    if (e.SIGNING_CSC_URL === undefined)
      issues.push('SIGNING_CSC_URL: required when SIGNER=csc (the service base, ending in /csc/v2)');
    const client = e.SIGNING_CSC_CLIENT_ID !== undefined || e.SIGNING_CSC_CLIENT_SECRET !== undefined;
    if (e.SIGNING_CSC_TOKEN === undefined && !client)
      issues.push(
        'SIGNING_CSC_TOKEN: required when SIGNER=csc, or SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET',
      );
    if (client && (e.SIGNING_CSC_CLIENT_ID === undefined || e.SIGNING_CSC_CLIENT_SECRET === undefined))
      issues.push(
        'SIGNING_CSC_CLIENT_SECRET: SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET go together',
      );
  }
  return issues;
}

/**
 * Production refuses the development certificate and a CSC service over plain http. The content of a configured
 * certificate (the development one copied under another name) is checked when the worker starts.
 */
function checkProduction(e: SigningEnv, ctx: LoadContext): string[] {
  if (ctx.nodeEnv !== 'production' || ctx.role === 'api') return [];
  if (e.SIGNER === 'csc' && e.SIGNING_CSC_URL?.startsWith('http:')) {
    return [
      `SIGNING_CSC_URL: must be an https URL when NODE_ENV=production (the service's credentials and PIN travel to it), not ${e.SIGNING_CSC_URL}`,
    ];
  }
  if (e.SIGNER !== 'p12') return [];
  if (e.SIGNING_P12_PATH === undefined) {
    return [
      'SIGNING_P12_PATH: required when NODE_ENV=production (with SIGNING_P12_PASSWORD); the development certificate is refused',
    ];
  }
  const devCert = path.join(ctx.dataDir, 'signing', DEV_P12_FILE);
  return path.resolve(e.SIGNING_P12_PATH) === devCert
    ? [
        `SIGNING_P12_PATH: ${e.SIGNING_P12_PATH} is the development certificate, which is refused when NODE_ENV=production`,
      ]
    : [];
}

function signerBlocks(e: SigningEnv): Pick<SigningConfig['signing'], 'pkcs11' | 'csc'> {
  return {
    ...(e.SIGNER === 'pkcs11' && {
      pkcs11: {
        modulePath: e.SIGNING_PKCS11_MODULE!,
        slot: e.SIGNING_PKCS11_SLOT,
        tokenLabel: e.SIGNING_PKCS11_TOKEN_LABEL,
        pin: e.SIGNING_PKCS11_PIN,
        pinFile: e.SIGNING_PKCS11_PIN_FILE,
        keyLabel: e.SIGNING_PKCS11_KEY_LABEL,
        keyId: e.SIGNING_PKCS11_KEY_ID?.toLowerCase(),
      },
    }),
    ...(e.SIGNER === 'csc' && {
      csc: {
        baseUrl: e.SIGNING_CSC_URL!,
        token: e.SIGNING_CSC_TOKEN,
        clientId: e.SIGNING_CSC_CLIENT_ID,
        clientSecret: e.SIGNING_CSC_CLIENT_SECRET,
        oauthTokenUrl: e.SIGNING_CSC_OAUTH_TOKEN_URL,
        credentialId: e.SIGNING_CSC_CREDENTIAL_ID,
        pin: e.SIGNING_CSC_PIN,
        timeoutMs: e.SIGNING_CSC_TIMEOUT_MS,
        retries: e.SIGNING_CSC_RETRIES,
        retryBackoffMs: e.SIGNING_CSC_RETRY_BACKOFF_MS,
      },
    }),
  };
}

export const signingSlice = defineSlice({
  title: 'Final signed PDF',
  about:
    'The signing key (a PKCS#12 file, an HSM over PKCS#11, or a remote signing service over the CSC API v2), time-stamps and the signature level (docs/signed-pdf.md).',
  env,
  derivedDefaults: {
    SIGNING_P12_PATH: 'a self-signed development certificate under DATA_DIR/signing (refused in production)',
    SIGNATURE_LEVEL: 'B-LTA with TSA_URL, else B-B (warned at start-up)',
  },
  checks: {
    production: checkProduction,
    signer: (e, ctx) => checkSigner(e, ctx.role),
    'signature-level': (e) =>
      e.SIGNATURE_LEVEL && e.SIGNATURE_LEVEL !== 'B-B' && !e.TSA_URL
        ? [
            `SIGNATURE_LEVEL: ${e.SIGNATURE_LEVEL} needs a time-stamp authority: set TSA_URL, or set SIGNATURE_LEVEL=B-B`,
          ]
        : [],
  },
  build: (e, ctx): SigningConfig => ({
    signing: {
      p12Path: e.SIGNING_P12_PATH,
      p12Password: e.SIGNING_P12_PASSWORD,
      devCertDir: path.join(ctx.dataDir, 'signing'),
      tsaUrl: e.TSA_URL,
      kind: e.SIGNER,
      ...signerBlocks(e),
      signatureLevel: e.SIGNATURE_LEVEL ?? (e.TSA_URL ? 'B-LTA' : 'B-B'),
      signatureLevelDefaulted: e.SIGNATURE_LEVEL === undefined,
      revocation: {
        timeoutMs: e.REVOCATION_TIMEOUT_MS,
        retries: e.REVOCATION_RETRIES,
        maxBytes: e.REVOCATION_MAX_BYTES,
      },
      archiveRenewal: {
        marginDays: e.ARCHIVE_RENEWAL_MARGIN_DAYS,
        intervalHours: e.ARCHIVE_RENEWAL_INTERVAL_HOURS,
        batchSize: e.ARCHIVE_RENEWAL_BATCH_SIZE,
      },
    },
  }),
});

/**
 * The start-up warning about the signature level, if any: without TSA_URL (and SIGNATURE_LEVEL unset) final PDFs are
 * PAdES B-B, which no validator can check once the signing certificate has expired or been revoked.
 */
export function signatureLevelWarning(config: SigningConfig): string | undefined {
  if (!config.signing.signatureLevelDefaulted || config.signing.signatureLevel !== 'B-B') return undefined;
  return 'TSA_URL is not set: final PDFs are signed at PAdES B-B (no time-stamp, no long-term validation data). Set TSA_URL for B-LTA (the default with a time-stamp authority), or SIGNATURE_LEVEL=B-B to silence this.';
}
