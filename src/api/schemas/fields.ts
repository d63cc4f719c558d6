import { z } from 'zod';
import { bidiControlMessage, NO_BIDI_CONTROLS } from '../../domain/bidi.ts';
import { LIMITS } from '../../domain/model.ts';

/**
 * Field builders shared by the request schemas. Each failure message names the field and the rule, so a
 * `details` entry reads on its own ("expires_in_days must be a whole number from 1 to 365").
 *
 * Multipart parts arrive as strings, JSON as typed values; the number builders accept both (`"7"` and `7`) so one
 * schema validates both bodies.
 */

// C0 controls and DEL: line breaks and NUL have no place in a title, a name or a role.
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

/** A required-when-present single-line text of at most 255 characters, stored exactly as given (no trimming, no
 * Unicode normalisation), without the directional controls that would make it read otherwise (domain/bidi.ts). */
export function text(field: string) {
  return z
    .string({
      error: (iss) => (iss.input === undefined ? `${field} is required` : `${field} must be a string`),
    })
    .max(LIMITS.textMax, { error: `${field} must be at most ${LIMITS.textMax} characters` })
    .regex(/\S/, { error: `${field} must not be blank` })
    .regex(NO_CONTROL, { error: `${field} must not contain line breaks or other control characters` })
    .regex(NO_BIDI_CONTROLS, { error: bidiControlMessage(field) });
}

/** An optional text a client may clear: `null` or `""` clear it. */
export function clearableText(field: string) {
  // '' never reaches the union (it becomes null first); it is there so the documented schema admits it.
  const cleared = z.literal('');
  return z.preprocess(
    (v) => (v === '' ? null : v),
    z.union([cleared, text(field)], { error: `${field} must be a string` }).nullable(),
  );
}

const INTEGER_STRING = /^\s*[+-]?\d+\s*$/;
const DECIMAL_STRING = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/;

export function integer(field: string, min: number, max: number) {
  const message = `${field} must be a whole number from ${min} to ${max}`;
  return z.preprocess(
    (v) => (typeof v === 'string' && INTEGER_STRING.test(v) ? Number(v) : v),
    z
      .number({ error: message })
      .int({ error: message })
      .min(min, { error: message })
      .max(max, { error: message }),
  );
}

export function decimal(field: string, min: number, max: number, options: { exclusiveMin?: boolean } = {}) {
  const message = `${field} must be a number ${options.exclusiveMin ? 'greater than' : 'from'} ${min}${options.exclusiveMin ? ' and at most' : ' to'} ${max}`;
  const base = z.number({ error: message });
  return z.preprocess(
    (v) => (typeof v === 'string' && DECIMAL_STRING.test(v) ? Number(v) : v),
    (options.exclusiveMin ? base.gt(min, { error: message }) : base.min(min, { error: message })).max(max, {
      error: message,
    }),
  );
}

/** A boolean: true or false in JSON; "true" or "false" as a multipart part. */
export function boolean(field: string) {
  return z.preprocess(
    (v) => (v === 'true' ? true : v === 'false' ? false : v),
    z.boolean({ error: `${field} must be true or false` }),
  );
}

export function oneOf<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, { error: `${field} must be one of: ${values.join(', ')}` });
}

/** Adds "X is required unless Y is given" issues for the bilingual shorthand of docs/product-rules.md §2. */
export function requireBilingual(
  value: Record<string, unknown>,
  ctx: z.RefinementCtx,
  base: 'title' | 'name',
): void {
  if (value[base] !== undefined) return;
  for (const lang of ['ar', 'en'] as const) {
    if (value[`${base}_${lang}`] === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [`${base}_${lang}`],
        message: `${base}_${lang} is required unless ${base} is given (one ${base} for both languages)`,
      });
    }
  }
}

/**
 * For refinements that must report even when other fields already failed (a missing title is worth saying
 * alongside a bad department), as long as the input is an object at all.
 */
export const ALWAYS_ON_OBJECTS = {
  when: (payload: { value: unknown }) =>
    typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
};

/** Path ids: anything that is not a UUID cannot name a resource, so it is a 404 like an unknown one. */
export const Uuid = z.uuid();
