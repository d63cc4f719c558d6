import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { sha256Hex } from './tokens.ts';

/**
 * Time-based one-time passwords (RFC 6238) as every authenticator app reads them: HMAC-SHA1, 6 digits, 30-second
 * steps, a 160-bit secret (RFC 4226's recommended length). The arithmetic is the `otpauth` library's; this module
 * fixes the parameters, normalizes what people type, and reports which time step a code belongs to, so the
 * caller can refuse a code of a step already used (replay).
 */
export const TOTP_POLICY = {
  digits: 6,
  periodSeconds: 30,
  /** Codes one step before or after the server's clock are accepted (a phone up to ~30 s off). */
  skewSteps: 1,
  secretBytes: 20,
} as const;

const ISSUER = 'Wathiq';

function totpFor(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: TOTP_POLICY.digits,
    period: TOTP_POLICY.periodSeconds,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A fresh secret, base32 (what the QR code carries and what a person types into an app by hand). */
export function newTotpSecret(): string {
  return new Secret({ size: TOTP_POLICY.secretBytes }).base32;
}

/** The `otpauth://totp/…` URI an authenticator app scans: issuer Wathiq, the account's email as label. */
export function otpauthUri(secretBase32: string, label: string): string {
  return totpFor(secretBase32, label).toString();
}

/** The time step `at` falls in. */
export function totpStep(at: Date): number {
  return TOTP.counter({ period: TOTP_POLICY.periodSeconds, timestamp: at.getTime() });
}

/** The code for `at` (tests and the browser test compute codes the way a phone would). */
export function totpCode(secretBase32: string, at: Date): string {
  return totpFor(secretBase32).generate({ timestamp: at.getTime() });
}

// Arabic-Indic (U+0660–0669) and Extended Arabic-Indic (U+06F0–06F9) digits, as an Arabic keyboard types them.
const ARABIC_DIGITS = /[\u0660-\u0669\u06f0-\u06f9]/g;

/**
 * What a person typed as a one-time code, as ASCII digits: spaces and hyphens dropped, Arabic digits read as
 * digits. Undefined when it is not exactly `digits` digits.
 */
export function normalizeTotpInput(input: string): string | undefined {
  if (input.length > 64) return undefined;
  const ascii = input
    .replace(ARABIC_DIGITS, (d) => String((d.codePointAt(0)! - 0x0660) % 0x90))
    .replace(/[\s-]/g, '');
  return new RegExp(`^\\d{${TOTP_POLICY.digits}}$`).test(ascii) ? ascii : undefined;
}

/**
 * The time step whose code `code` (normalized) is, within the allowed skew around `at`; undefined when it is
 * none of them. The comparison is the library's, in constant time.
 */
export function matchTotp(secretBase32: string, code: string, at: Date): number | undefined {
  const delta = totpFor(secretBase32).validate({
    token: code,
    timestamp: at.getTime(),
    window: TOTP_POLICY.skewSteps,
  });
  return delta === null ? undefined : totpStep(at) + delta;
}

/** Recovery codes: 16 characters of 32 that cannot be mistaken for each other (no 0/O, 1/I), so 80 bits. */
const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const RECOVERY_LENGTH = 16;

export function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < RECOVERY_LENGTH; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return code.match(/.{4}/g)!.join('-');
}

/** A recovery code as typed, in its canonical form (upper case, no spaces or hyphens), or undefined. */
export function normalizeRecoveryCode(input: string): string | undefined {
  // ASCII only, checked before upper-casing: 'ß'.toUpperCase() is 'SS', and no such letter is in a code.
  if (input.length > 64 || !/^[A-Za-z0-9 \t-]*$/.test(input)) return undefined;
  const canonical = input.toUpperCase().replace(/[ \t-]/g, '');
  if (canonical.length !== RECOVERY_LENGTH) return undefined;
  for (const c of canonical) if (!RECOVERY_ALPHABET.includes(c)) return undefined;
  return canonical;
}

/**
 * What is stored of a recovery code. SHA-256 without a salt is enough for 80 random bits (no table or guessing
 * helps); a slow hash would cost a scrypt run per stored code at every attempt.
 */
export function recoveryCodeHash(canonical: string): string {
  return sha256Hex(`wathiq-recovery:${canonical}`);
}
