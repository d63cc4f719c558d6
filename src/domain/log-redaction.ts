import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * What a log line must not carry, found in the finished line (messages, URLs, errors and stacks alike):
 *
 * - A token in a path is a credential: `/a/{token}` acts as an approver, `/files/{token}` downloads a signed PDF,
 *   `/v/{token}` shows the signed document's certificate. The pages' own assets (`/a/assets/…`, `/v/assets/…`)
 *   are not tokens.
 * - So is the token in a WhatsApp quick reply's payload (`approve:{token}`, `review:…`, `reject:…`).
 * - Meta's `hub.verify_token` (the query of the WhatsApp webhook's handshake) is a shared secret.
 * - Phone numbers are personal data: only their last four digits are kept.
 */
const TOKEN_IN_PATH = /(\/(?:a|files|v)\/)(?!assets(?:[/?#"'\s\\]|$))[^/?#"'\s\\<>]+/g;
const VERIFY_TOKEN = /(hub(?:\.|%2e|_)verify_token=)[^&#"'\s\\]*/gi;
const BUTTON_PAYLOAD = /\b((?:approve|review|reject):)[A-Za-z0-9_-]{16,}/g;

/**
 * Digit runs that may be a phone number: 7 to 15 digits, after a "+" or "00" or none, the digits after a "+" maybe
 * in groups split by single spaces or dashes; never part of a longer word, number or id.
 */
const PHONE_CANDIDATE = /(?<![\w.+-])(?:\+\d(?:[ -]?\d){6,16}|\d{7,17})(?![\w-]|\.\d)/g;

/** Replaces every path token, button token and verify token in `text` with `[redacted]`. */
export function redactTokens(text: string): string {
  return text
    .replace(TOKEN_IN_PATH, '$1[redacted]')
    .replace(BUTTON_PAYLOAD, '$1[redacted]')
    .replace(VERIFY_TOKEN, '$1[redacted]');
}

/**
 * Replaces each phone number in `text` with `***` and its last four digits. A candidate counts when it is a valid
 * number in international form (as Wathiq stores every number it accepted, all of which passed this same
 * check), so timestamps, sizes and ids, which are not, are left as they are.
 */
export function redactPhones(text: string): string {
  return text.replace(PHONE_CANDIDATE, (match) => {
    const digits = match.replace(/\D/g, '').replace(/^00/, '');
    if (digits.length < 7 || digits.length > 15) return match;
    return parsePhoneNumberFromString(`+${digits}`)?.isValid() ? `***${digits.slice(-4)}` : match;
  });
}

/** A finished log line as it may be written. */
export function redactLogLine(line: string): string {
  return redactPhones(redactTokens(line));
}
