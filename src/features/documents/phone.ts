import { parsePhoneNumberFromString } from 'libphonenumber-js';

export type PhoneResult = { ok: true; phone: string } | { ok: false; message: string };

export const PHONE_MESSAGES = {
  required: 'phone is required',
  notString: 'phone must be a string of digits such as 966501234567',
  format:
    'phone must be an international WhatsApp number: the country code then the number, digits only, optionally after a +, such as 966501234567',
  invalid: 'phone is not a valid phone number for its country code',
} as const;

// Separators people type; removed before validation. Anything else (letters, extensions) is refused.
const SEPARATORS = /[\s().-]/g;

/**
 * A WhatsApp number in E.164 form (docs/product-rules.md §2): `9665XXXXXXXX` or `+9665XXXXXXXX` (spaces, dots,
 * dashes and brackets between digits are tolerated, and `00` may stand for `+`). Stored and returned as digits
 * only. A number libphonenumber does not consider valid for its country is refused; a national number without a
 * country code (`0501234567`) cannot be told apart from a foreign one and is refused too.
 */
export function normalizePhone(input: string): PhoneResult {
  const compact = input.trim().replace(SEPARATORS, '');
  const match = /^(?:\+|00)?([1-9]\d{6,14})$/.exec(compact);
  if (!match) return { ok: false, message: PHONE_MESSAGES.format };
  const parsed = parsePhoneNumberFromString(`+${match[1]}`);
  if (!parsed?.isValid()) return { ok: false, message: PHONE_MESSAGES.invalid };
  return { ok: true, phone: parsed.number.slice(1) };
}
