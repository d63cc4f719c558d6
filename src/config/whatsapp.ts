import { z } from 'zod';
import type { Language } from '../domain/model.ts';
import { optionalString, templateLanguage, templateName } from './fields.ts';
import { isLoopbackHost } from './http.ts';
import { defineSlice } from './slice.ts';

/**
 * Template names per button set: `link` has only the URL button (sign, stamp); `approve` and `review` add the
 * quick replies (approve_only, review_only). A template's buttons are fixed when Meta approves it, so each set
 * is its own template.
 */
export interface TemplateVariants {
  link: string;
  approve: string;
  review: string;
}

export interface WhatsAppTemplateConfig {
  approvalRequest: TemplateVariants;
  reminder: TemplateVariants;
  voided: string;
  rejected: string;
  /** The signed copy: a template with a DOCUMENT header (the signed PDF) and the name/title/reference body. */
  signedCopy: string;
  /** Meta language codes of the approved translations, e.g. `ar` and `en` (or `en_US`). */
  languages: Record<Language, string>;
}

/**
 * How recording a sent message's id is retried in-process before the attempt fails: `attempts` tries in all,
 * waiting backoffMs, 2×backoffMs, 4×backoffMs … between them.
 */
export interface RecordRetry {
  attempts: number;
  backoffMs: number;
}

export interface WhatsAppConfig {
  provider: 'cloud' | 'console';
  apiUrl: string;
  phoneNumberId?: string;
  accessToken?: string;
  appSecret?: string;
  verifyToken?: string;
  timeoutMs: number;
  templates: WhatsAppTemplateConfig;
  recordRetry: RecordRetry;
}

export interface WhatsAppSliceConfig {
  whatsapp: WhatsAppConfig;
}

const template = (name: string, what: string) => templateName.default(name).describe(what);

export const whatsappSlice = defineSlice({
  title: 'WhatsApp',
  about:
    "Meta's WhatsApp Cloud API (docs/product-rules.md §5; the templates to register with Meta: src/whatsapp/README.md).",
  env: {
    WHATSAPP_PROVIDER: z
      .enum(['cloud', 'console'])
      .default('console')
      .describe(
        "cloud (Meta's WhatsApp Cloud API) | console (development: logged and listed at /dev/inbox, on a loopback HOST only; refused in production)",
      ),
    WHATSAPP_API_URL: z
      .url({ protocol: /^https?$/ })
      .default('https://graph.facebook.com/v21.0')
      .describe('the Graph API base'),
    WHATSAPP_PHONE_NUMBER_ID: z
      .string()
      .regex(/^\d{1,32}$/, 'the numeric phone number id')
      .optional()
      .describe("cloud: the sending business phone number's id (required with cloud)"),
    WHATSAPP_ACCESS_TOKEN: optionalString.describe('cloud: a system-user access token (required with cloud)'),
    WHATSAPP_APP_SECRET: optionalString.describe(
      'cloud: checks X-Hub-Signature-256 on the inbound webhook (required with cloud)',
    ),
    WHATSAPP_VERIFY_TOKEN: optionalString.describe(
      "cloud: answers Meta's webhook verification handshake (required with cloud)",
    ),
    WHATSAPP_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(120_000)
      .default(10_000)
      .describe('the deadline of one Cloud API call'),
    WHATSAPP_TEMPLATE_APPROVAL: template(
      'wathiq_approval_request',
      'the approval request of sign and stamp: URL button only',
    ),
    WHATSAPP_TEMPLATE_APPROVAL_APPROVE: template(
      'wathiq_approval_request_approve',
      'the approval request of approve_only: Approve, Reject and the URL button',
    ),
    WHATSAPP_TEMPLATE_APPROVAL_REVIEW: template(
      'wathiq_approval_request_review',
      'the approval request of review_only: Mark reviewed, Reject and the URL button',
    ),
    WHATSAPP_TEMPLATE_REMINDER: template('wathiq_reminder', 'the reminder of sign and stamp'),
    WHATSAPP_TEMPLATE_REMINDER_APPROVE: template('wathiq_reminder_approve', 'the reminder of approve_only'),
    WHATSAPP_TEMPLATE_REMINDER_REVIEW: template('wathiq_reminder_review', 'the reminder of review_only'),
    WHATSAPP_TEMPLATE_VOIDED: template('wathiq_document_voided', 'the notice that a document was voided'),
    WHATSAPP_TEMPLATE_REJECTED: template(
      'wathiq_document_rejected',
      'the notice that a document was rejected',
    ),
    WHATSAPP_TEMPLATE_SIGNED_COPY: template(
      'wathiq_signed_copy',
      "the signed copy's template: a DOCUMENT header (the signed PDF, sent by link)",
    ),
    WHATSAPP_TEMPLATE_LANGUAGE_AR: templateLanguage
      .default('ar')
      .describe('the language code of the approved Arabic translations'),
    WHATSAPP_TEMPLATE_LANGUAGE_EN: templateLanguage
      .default('en')
      .describe('the language code of the approved English translations (en or en_US)'),
    WHATSAPP_RECORD_ATTEMPTS: z.coerce
      .number()
      .int()
      .min(1)
      .max(10)
      .default(3)
      .describe(
        "the outbox: a sent message's id is recorded with this many tries before the activity's attempt fails (the id is then kept in the activity's heartbeat, so the retry records it and sends nothing)",
      ),
    WHATSAPP_RECORD_BACKOFF_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(200)
      .describe('the first wait between those tries; each further wait doubles'),
  },
  checks: {
    /**
     * The Cloud API needs its ids and secrets; the console provider is for development only
     * (docs/product-rules.md §5), on a server that listens on loopback (its messages, approval links included, are
     * read at /dev/inbox).
     */
    whatsapp: (e, ctx) => {
      if (e.WHATSAPP_PROVIDER === 'console') {
        if (ctx.nodeEnv === 'production')
          return ['WHATSAPP_PROVIDER: console is for development; use cloud when NODE_ENV=production'];
        return isLoopbackHost(ctx.host)
          ? []
          : [
              `WHATSAPP_PROVIDER: console needs a loopback HOST (127.0.0.1, ::1, localhost), not ${ctx.host}: its messages and their approval links are listed at /dev/inbox; use cloud on a server others can reach`,
            ];
      }
      const required = {
        WHATSAPP_PHONE_NUMBER_ID: e.WHATSAPP_PHONE_NUMBER_ID,
        WHATSAPP_ACCESS_TOKEN: e.WHATSAPP_ACCESS_TOKEN,
        WHATSAPP_APP_SECRET: e.WHATSAPP_APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: e.WHATSAPP_VERIFY_TOKEN,
      };
      return Object.entries(required)
        .filter(([, v]) => v === undefined)
        .map(([name]) => `${name}: required when WHATSAPP_PROVIDER=cloud`);
    },
  },
  build: (e): WhatsAppSliceConfig => ({
    whatsapp: {
      provider: e.WHATSAPP_PROVIDER,
      apiUrl: e.WHATSAPP_API_URL.replace(/\/+$/, ''),
      phoneNumberId: e.WHATSAPP_PHONE_NUMBER_ID,
      accessToken: e.WHATSAPP_ACCESS_TOKEN,
      appSecret: e.WHATSAPP_APP_SECRET,
      verifyToken: e.WHATSAPP_VERIFY_TOKEN,
      timeoutMs: e.WHATSAPP_TIMEOUT_MS,
      templates: {
        approvalRequest: {
          link: e.WHATSAPP_TEMPLATE_APPROVAL,
          approve: e.WHATSAPP_TEMPLATE_APPROVAL_APPROVE,
          review: e.WHATSAPP_TEMPLATE_APPROVAL_REVIEW,
        },
        reminder: {
          link: e.WHATSAPP_TEMPLATE_REMINDER,
          approve: e.WHATSAPP_TEMPLATE_REMINDER_APPROVE,
          review: e.WHATSAPP_TEMPLATE_REMINDER_REVIEW,
        },
        voided: e.WHATSAPP_TEMPLATE_VOIDED,
        rejected: e.WHATSAPP_TEMPLATE_REJECTED,
        signedCopy: e.WHATSAPP_TEMPLATE_SIGNED_COPY,
        languages: { ar: e.WHATSAPP_TEMPLATE_LANGUAGE_AR, en: e.WHATSAPP_TEMPLATE_LANGUAGE_EN },
      },
      recordRetry: { attempts: e.WHATSAPP_RECORD_ATTEMPTS, backoffMs: e.WHATSAPP_RECORD_BACKOFF_MS },
    },
  }),
});
