import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ButtonAction } from './templates.ts';

/**
 * Meta's side of the inbound webhook (docs/product-rules.md §5): the verification handshake, the
 * `X-Hub-Signature-256` check over the raw bytes, and the notification payload reduced to what Wathiq acts on —
 * button replies and delivery statuses. Schemas accept extra fields, since Meta adds fields without notice.
 */

// ---- Signature ----

/**
 * True when `header` is `sha256=` + the hex HMAC-SHA256 of exactly these bytes under the app secret. Compare
 * the raw body as received, before any JSON parsing: a re-serialized body does not carry the same bytes.
 */
export function verifyMetaSignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  if (!header || !appSecret) return false;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from(match[1]!, 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function signMetaPayload(rawBody: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

// ---- Verification handshake ----

/**
 * `GET /webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`: returns the challenge to
 * echo (as text/plain, status 200) when the token matches, or undefined (answer 403).
 */
export function verifyHandshake(
  query: Record<string, string | string[] | undefined>,
  verifyToken: string | undefined,
): string | undefined {
  const mode = single(query['hub.mode']);
  const token = single(query['hub.verify_token']);
  const challenge = single(query['hub.challenge']);
  if (mode !== 'subscribe' || !token || !verifyToken || !challenge) return undefined;
  // Echoed back verbatim, so only the characters Meta uses (it sends a number) are accepted.
  if (!/^[A-Za-z0-9._-]{1,256}$/.test(challenge)) return undefined;
  const a = Buffer.from(token);
  const b = Buffer.from(verifyToken);
  return a.length === b.length && timingSafeEqual(a, b) ? challenge : undefined;
}

function single(v: string | string[] | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// ---- Button payloads ----

export interface ButtonPayload {
  action: ButtonAction;
  token: string;
}

/** `approve:<token>`, `review:<token>` or `reject:<token>` (what templates.ts puts on the quick replies). */
export function parseButtonPayload(payload: string | undefined | null): ButtonPayload | undefined {
  const match = /^(approve|review|reject):([A-Za-z0-9_-]{16,128})$/.exec(payload ?? '');
  if (!match) return undefined;
  return { action: match[1] as ButtonAction, token: match[2]! };
}

// ---- Notification payload ----

export interface InboundReply {
  /** The inbound message id: the replay dedupe key. */
  wamid: string;
  /**
   * Sender's number, digits only (Meta may send it with or without `+`). Absent when Meta withholds it: a user who
   * adopted a WhatsApp username may reply without the phone number.
   */
  from?: string;
  /** The sender's WhatsApp user id, `contacts[].wa_id`, when present and well formed. */
  waId?: string;
  /** The sender's business-scoped user id (BSUID), `contacts[].user_id`, when present and well formed. */
  userId?: string;
  timestamp: Date;
  /** `button.payload` or `interactive.button_reply.id`. */
  payload: string;
  source: 'button' | 'interactive';
  /** The id of our message whose button was tapped. */
  contextWamid?: string;
  /** Which of our business numbers received it. */
  phoneNumberId?: string;
}

export const DELIVERY_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface StatusError {
  code?: number;
  title?: string;
  message?: string;
  details?: string;
}

export interface InboundStatus {
  /** Our outbound message's id. */
  wamid: string;
  status: DeliveryStatus;
  timestamp: Date;
  recipient?: string;
  errors: StatusError[];
}

export interface ParsedNotification {
  replies: InboundReply[];
  statuses: InboundStatus[];
  /** Entries that were neither a button reply nor a known status (text messages, images, malformed items). */
  ignored: number;
}

const timestampSchema = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const seconds = Number(v);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    ctx.addIssue({ code: 'custom', message: 'not a unix timestamp' });
    return z.NEVER;
  }
  return new Date(seconds * 1000);
});

const messageSchema = z.object({
  from: z.string().min(1).optional(),
  id: z.string().min(1),
  timestamp: timestampSchema,
  type: z.string(),
  context: z.object({ id: z.string().optional() }).optional(),
  button: z.object({ payload: z.string().optional(), text: z.string().optional() }).optional(),
  interactive: z
    .object({
      type: z.string(),
      button_reply: z.object({ id: z.string(), title: z.string().optional() }).optional(),
    })
    .optional(),
});

const statusSchema = z.object({
  id: z.string().min(1),
  status: z.enum(DELIVERY_STATUSES),
  timestamp: timestampSchema,
  recipient_id: z.string().optional(),
  errors: z
    .array(
      z.object({
        code: z.number().int().optional(),
        title: z.string().optional(),
        message: z.string().optional(),
        error_data: z.object({ details: z.string().optional() }).optional(),
      }),
    )
    .optional(),
});

const envelopeSchema = z.object({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(
    z.object({
      changes: z.array(
        z.object({
          field: z.string().optional(),
          value: z.object({
            metadata: z.object({ phone_number_id: z.string().optional() }).optional(),
            contacts: z.array(z.unknown()).optional(),
            messages: z.array(z.unknown()).optional(),
            statuses: z.array(z.unknown()).optional(),
          }),
        }),
      ),
    }),
  ),
});

/**
 * Reduces a `messages` webhook notification to button replies and delivery statuses. Template quick replies
 * arrive as `type: "button"` with `button.payload`; interactive reply buttons as `type: "interactive"` with
 * `interactive.button_reply.id`. Anything else is counted in `ignored`. A body that is not a WhatsApp Business
 * Account notification at all yields nothing (and one ignored item), never an exception.
 */
export function parseNotification(json: unknown): ParsedNotification {
  const result: ParsedNotification = { replies: [], statuses: [], ignored: 0 };
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    result.ignored = 1;
    return result;
  }
  for (const entry of envelope.data.entry) {
    for (const change of entry.changes) {
      if (change.field !== undefined && change.field !== 'messages') {
        result.ignored++;
        continue;
      }
      const phoneNumberId = change.value.metadata?.phone_number_id;
      const contacts = (change.value.contacts ?? []).map(toContact);
      for (const raw of change.value.messages ?? []) {
        const reply = toReply(raw, phoneNumberId, contacts);
        if (reply) result.replies.push(reply);
        else result.ignored++;
      }
      for (const raw of change.value.statuses ?? []) {
        const parsed = statusSchema.safeParse(raw);
        if (!parsed.success) {
          result.ignored++;
          continue;
        }
        const s = parsed.data;
        result.statuses.push({
          wamid: s.id,
          status: s.status,
          timestamp: s.timestamp,
          ...(s.recipient_id !== undefined && { recipient: digits(s.recipient_id) }),
          errors: (s.errors ?? []).map((e) => ({
            ...(e.code !== undefined && { code: e.code }),
            ...(e.title !== undefined && { title: e.title }),
            ...(e.message !== undefined && { message: e.message }),
            ...(e.error_data?.details !== undefined && { details: e.error_data.details }),
          })),
        });
      }
    }
  }
  return result;
}

// ---- Sender identity ----

/**
 * Meta's ids for a WhatsApp user, bounded and with a strict charset; anything else is treated as absent. `wa_id`
 * is the user's WhatsApp id (today their number, digits). The business-scoped user id (BSUID, in `user_id`) is a
 * two-letter ISO country code, a period, and up to 128 letters and digits (`SA.1502576394655843`); a parent BSUID
 * shared across linked portfolios has `ENT.` after the country code (`SA.ENT.118157992128868448`).
 */
export const WA_ID_PATTERN = /^[0-9]{5,20}$/;
export const BSUID_PATTERN = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

interface Contact {
  waId?: string;
  userId?: string;
}

const contactSchema = z.object({ wa_id: z.string().optional(), user_id: z.string().optional() });

function toContact(raw: unknown): Contact {
  const parsed = contactSchema.safeParse(raw);
  if (!parsed.success) return {};
  const { wa_id: waId, user_id: userId } = parsed.data;
  return {
    ...(waId !== undefined && WA_ID_PATTERN.test(waId) && { waId }),
    ...(userId !== undefined && BSUID_PATTERN.test(userId) && { userId }),
  };
}

/**
 * The contact a message came from: the one whose `wa_id` is the message's `from`, or else the only contact of the
 * change (Meta sends one contact with each user message, and none of the ids when the user withholds the number).
 */
function contactOf(from: string | undefined, contacts: Contact[]): Contact {
  const byNumber = from === undefined ? undefined : contacts.find((c) => c.waId === from);
  return byNumber ?? (contacts.length === 1 ? contacts[0]! : {});
}

function toReply(
  raw: unknown,
  phoneNumberId: string | undefined,
  contacts: Contact[],
): InboundReply | undefined {
  const parsed = messageSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const m = parsed.data;
  const fromDigits = m.from === undefined ? undefined : digits(m.from);
  const from = fromDigits !== undefined && WA_ID_PATTERN.test(fromDigits) ? fromDigits : undefined;
  const contact = contactOf(from, contacts);
  // A reply that names its sender in no usable way cannot be matched to anyone.
  if (from === undefined && contact.waId === undefined && contact.userId === undefined) return undefined;
  let payload: string | undefined;
  let source: InboundReply['source'];
  if (m.type === 'button' && m.button?.payload) {
    payload = m.button.payload;
    source = 'button';
  } else if (
    m.type === 'interactive' &&
    m.interactive?.type === 'button_reply' &&
    m.interactive.button_reply
  ) {
    payload = m.interactive.button_reply.id;
    source = 'interactive';
  } else {
    return undefined;
  }
  return {
    wamid: m.id,
    ...(from !== undefined && { from }),
    ...(contact.waId !== undefined && { waId: contact.waId }),
    ...(contact.userId !== undefined && { userId: contact.userId }),
    timestamp: m.timestamp,
    payload,
    source,
    ...(m.context?.id !== undefined && { contextWamid: m.context.id }),
    ...(phoneNumberId !== undefined && { phoneNumberId }),
  };
}

function digits(phone: string): string {
  return phone.replace(/\D/g, '');
}
