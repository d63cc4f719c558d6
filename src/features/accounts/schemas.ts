import { z } from 'zod';
import {
  checkEmbedOrigin,
  EMBED_ORIGIN_MAX_LENGTH,
  EMBED_ORIGIN_PATTERN,
  EMBED_ORIGINS_MAX,
} from './embed-origins.ts';
import { VERIFICATIONS } from '../../domain/model.ts';
import { Reminders } from '../documents/documents-schemas.ts';
import { oneOf } from '../../api/schemas/fields.ts';

const DEFAULT_REMINDERS =
  'The automatic reminders of documents sent without their own reminders; null: the server default (AUTO_REMIND_*, off unless configured). Taken when a document is sent.';
const DEFAULT_VERIFICATION =
  'The verification of approvers added without their own verification (none, or whatsapp_otp: a one-time code over WhatsApp before acting on the approval page). Taken when the approver is added.';

const EmbedOrigin = z
  .string({ error: 'each embed origin must be a string' })
  .transform((value, ctx) => {
    const r = checkEmbedOrigin(value);
    if (r.ok) return r.origin;
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value.slice(0, 80))} ${r.message}` });
    return z.NEVER;
  })
  .meta({
    // The documented form of the rule checkEmbedOrigin applies.
    pattern: EMBED_ORIGIN_PATTERN,
    maxLength: EMBED_ORIGIN_MAX_LENGTH,
    description:
      'An https origin: https://host or https://host:port, or https://*.example.com for its subdomains; no path, query or other wildcard.',
    examples: ['https://app.example.com', 'https://*.example.com'],
  });

/** PUT /account/settings: what is given replaces what was there. */
export const AccountSettingsUpdate = z.strictObject({
  embed_origins: z
    .array(EmbedOrigin, { error: 'embed_origins must be a list of https origins' })
    .max(EMBED_ORIGINS_MAX, { error: `embed_origins lists at most ${EMBED_ORIGINS_MAX} origins` })
    .optional()
    .meta({
      description: `The origins allowed to frame the approval page (its Content-Security-Policy frame-ancestors); at most ${EMBED_ORIGINS_MAX}. [] (the default): no one may frame it.`,
    }),
  default_reminders: Reminders.nullable()
    .optional()
    .meta({ description: `${DEFAULT_REMINDERS} null clears it.` }),
  default_verification: oneOf('default_verification', VERIFICATIONS)
    .optional()
    .meta({ description: DEFAULT_VERIFICATION }),
});

export const AccountSettingsResource = z
  .strictObject({
    embed_origins: z
      .array(z.string())
      .meta({ description: 'Who may frame the approval page; [] for no one' }),
    default_reminders: Reminders.nullable().meta({ description: DEFAULT_REMINDERS }),
    default_verification: z.enum(VERIFICATIONS).meta({ description: DEFAULT_VERIFICATION }),
  })
  .meta({ id: 'AccountSettings' });
