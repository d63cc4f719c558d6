import type { SignatureLevel } from '../domain/signature-levels.ts';

/** Where the signing key is: a PKCS#12 file beside the process, an HSM (PKCS#11) or a remote service (CSC v2). */
export const SIGNER_KINDS = ['p12', 'pkcs11', 'csc'] as const;
export type SignerKind = (typeof SIGNER_KINDS)[number];

/** SIGNER=pkcs11: the HSM's module, token, PIN and key (src/pdf/sign/pkcs11-signer.ts). */
export interface Pkcs11SignerOptions {
  /** SIGNING_PKCS11_MODULE: the vendor's PKCS#11 library (.so). */
  modulePath: string;
  /** SIGNING_PKCS11_SLOT: the slot id; or SIGNING_PKCS11_TOKEN_LABEL; neither: the only token present. */
  slot?: number;
  tokenLabel?: string;
  /** SIGNING_PKCS11_PIN, or SIGNING_PKCS11_PIN_FILE (read at each login, so a fixed file is picked up). */
  pin?: string;
  pinFile?: string;
  /** SIGNING_PKCS11_KEY_LABEL and/or SIGNING_PKCS11_KEY_ID (hex CKA_ID); neither: the token's only private key. */
  keyLabel?: string;
  keyId?: string;
}

/** SIGNER=csc: the Cloud Signature Consortium v2 service (src/pdf/sign/csc-signer.ts). */
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

/** Time limits of revocation fetching (REVOCATION_*). */
export interface RevocationOptions {
  /** Per request. */
  timeoutMs: number;
  /** Further attempts after a failed request (network error, time-out, HTTP error, unreadable answer). */
  retries: number;
  /** Largest OCSP response or CRL read. */
  maxBytes: number;
}

export interface SigningConfig {
  signing: {
    /** PKCS#12 with the key and certificate chain that sign final PDFs; unset: the development certificate. */
    p12Path?: string;
    p12Password?: string;
    /** Where the development certificate is created once and kept: `${DATA_DIR}/signing`. */
    devCertDir: string;
    /** RFC 3161 time-stamp authority; adds a signature time-stamp (PAdES B-T and above). */
    tsaUrl?: string;
    /** Where the key is (SIGNER); `pkcs11` and `csc` set their block. */
    kind: SignerKind;
    pkcs11?: Pkcs11SignerOptions;
    csc?: CscSignerOptions;
    /** SIGNATURE_LEVEL; default B-LTA with TSA_URL, B-B without (see `signatureLevelWarning`). */
    signatureLevel: SignatureLevel;
    /** Whether SIGNATURE_LEVEL was left unset (B-B by default for want of a TSA: warned about at start-up). */
    signatureLevelDefaulted: boolean;
    /** REVOCATION_*: OCSP and CRL fetching for B-LT and B-LTA, inside the finalization activity. */
    revocation: RevocationOptions;
    /** ARCHIVE_RENEWAL_*: the schedule that renews B-LTA document time-stamps before their certificate expires. */
    archiveRenewal: { marginDays: number; intervalHours: number; batchSize: number };
  };
}

/** Where the development certificate is kept under `signing.devCertDir` (src/pdf/sign/signer.ts creates it). */
export const DEV_P12_FILE = 'dev-signing-certificate.p12';
