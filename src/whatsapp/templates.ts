import type { ActionType, Language, NoticeKind } from '../domain/model.ts';
import type { ApprovalNotice, TemplateVariants, WhatsAppTemplateConfig } from './types.ts';

/**
 * Business-initiated WhatsApp messages are template messages (docs/product-rules.md §5). This module turns an
 * ApprovalNotice into the Cloud API request body, and keeps the text of each template so the console provider
 * can show what the phone would show. `src/whatsapp/README.md` lists the templates to register with Meta; the
 * parameter order and button layout here must match them.
 */

// ---- Meta's request format: POST /{phone-number-id}/messages with type "template" ----

export interface TextParameter {
  type: 'text';
  text: string;
}
export interface PayloadParameter {
  type: 'payload';
  payload: string;
}
export type TemplateComponent =
  | { type: 'header'; parameters: [{ type: 'document'; document: { link: string; filename: string } }] }
  | { type: 'body'; parameters: TextParameter[] }
  | { type: 'button'; sub_type: 'url'; index: string; parameters: [TextParameter] }
  | { type: 'button'; sub_type: 'quick_reply'; index: string; parameters: [PayloadParameter] };

export interface GraphTemplateMessage {
  messaging_product: 'whatsapp';
  recipient_type: 'individual';
  to: string;
  type: 'template';
  template: { name: string; language: { code: string }; components: TemplateComponent[] };
}

// ---- Layout shared with the registered templates ----

/** Which button set a notice needs; each set is a separately approved template. */
export type ButtonVariant = keyof TemplateVariants;

/**
 * Button positions in the registered templates. `link`: [0] URL. `approve`/`review`: [0] approve (or review)
 * quick reply, [1] reject quick reply, [2] URL. Meta addresses a button by this index.
 */
export const BUTTON_INDEX = {
  link: { url: 0 },
  approve: { primary: 0, reject: 1, url: 2 },
  review: { primary: 0, reject: 1, url: 2 },
} as const;

export type ButtonAction = 'approve' | 'review' | 'reject';

export function buttonPayload(action: ButtonAction, token: string): string {
  return `${action}:${token}`;
}

/**
 * Arabic for Saudi numbers (966…), English otherwise; the approver's own `language` wins (docs/product-rules.md
 * §5).
 */
export function languageFor(phone: string, override?: Language | null): Language {
  if (override) return override;
  return phone.replace(/^\+/, '').startsWith('966') ? 'ar' : 'en';
}

export function variantFor(actionType: ActionType): ButtonVariant {
  switch (actionType) {
    case 'approve_only':
      return 'approve';
    case 'review_only':
      return 'review';
    case 'sign':
    case 'stamp':
      return 'link';
  }
}

/** Whether the kind invites the approver to act (URL button, quick replies) or only informs. */
export function isActionable(kind: NoticeKind): kind is 'approval_request' | 'reminder' {
  return kind === 'approval_request' || kind === 'reminder';
}

export function templateNameFor(
  notice: Pick<ApprovalNotice, 'kind' | 'actionType'>,
  templates: WhatsAppTemplateConfig,
) {
  switch (notice.kind) {
    case 'approval_request':
      return templates.approvalRequest[variantFor(notice.actionType)];
    case 'reminder':
      return templates.reminder[variantFor(notice.actionType)];
    case 'voided':
      return templates.voided;
    case 'rejected':
      return templates.rejected;
    case 'signed_copy':
      return templates.signedCopy;
  }
}

/** The body parameters in order: {{1}} name, {{2}} title, {{3}} reference, and for actionable kinds {{4}} action. */
export function bodyParameters(notice: ApprovalNotice): string[] {
  const base = [notice.approverName, notice.documentTitle, notice.reference];
  return isActionable(notice.kind) ? [...base, ACTION_LABELS[notice.language][notice.actionType]] : base;
}

/** Builds the Cloud API request body for a notice (Meta's template message format). */
export function buildTemplateMessage(
  notice: ApprovalNotice,
  templates: WhatsAppTemplateConfig,
): GraphTemplateMessage {
  const components: TemplateComponent[] = [];
  if (notice.kind === 'signed_copy') {
    if (!notice.document) throw new Error('A signed_copy notice needs the signed document');
    components.push({
      type: 'header',
      parameters: [
        {
          type: 'document',
          document: { link: notice.document.link, filename: documentFilename(notice.document.filename) },
        },
      ],
    });
  }
  components.push({
    type: 'body',
    parameters: bodyParameters(notice).map((text) => ({ type: 'text', text: paramText(text) })),
  });
  if (isActionable(notice.kind)) {
    if (!notice.linkToken) throw new Error(`A ${notice.kind} notice needs the approver's link token`);
    const variant = variantFor(notice.actionType);
    if (variant !== 'link') {
      const layout = BUTTON_INDEX[variant];
      components.push(
        quickReply(layout.primary, buttonPayload(variant, notice.linkToken)),
        quickReply(layout.reject, buttonPayload('reject', notice.linkToken)),
      );
    }
    components.push({
      type: 'button',
      sub_type: 'url',
      index: String(BUTTON_INDEX[variant].url),
      parameters: [{ type: 'text', text: notice.linkToken }],
    });
  }
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: notice.phone.replace(/^\+/, ''),
    type: 'template',
    template: {
      name: templateNameFor(notice, templates),
      language: { code: templates.languages[notice.language] },
      components,
    },
  };
}

/**
 * The file name the recipient's phone shows: no path separators or control characters, at most 200 characters,
 * ending in `.pdf`.
 */
export function documentFilename(name: string): string {
  const flat = name
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f/\\]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\.pdf$/i, '');
  return `${[...(flat === '' ? 'document' : flat)].slice(0, 196).join('')}.pdf`;
}

function quickReply(index: number, payload: string): TemplateComponent {
  return {
    type: 'button',
    sub_type: 'quick_reply',
    index: String(index),
    parameters: [{ type: 'payload', payload }],
  };
}

/**
 * Meta refuses parameter text with new lines, tabs or more than four consecutive spaces (error 132018), and
 * empty text; titles and names are user input, so they are flattened here.
 */
function paramText(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat === '' ? '-' : flat;
}

// ---- The text of the registered templates, for the console outbox and the README ----

export const ACTION_LABELS: Record<Language, Record<ActionType, string>> = {
  en: { sign: 'sign', stamp: 'stamp', approve_only: 'approve', review_only: 'review' },
  ar: { sign: 'توقيع', stamp: 'ختم', approve_only: 'اعتماد', review_only: 'مراجعة' },
};

export const TEMPLATE_TEXT: Record<NoticeKind, Record<Language, string>> = {
  approval_request: {
    en: 'Hello {{1}}, you are asked to {{4}} the document "{{2}}" (reference {{3}}). Tap the button below to open it.',
    ar: 'مرحباً {{1}}، نرجو منك {{4}} المستند «{{2}}» (المرجع {{3}}). اضغط الزر أدناه لفتحه.',
  },
  reminder: {
    en: 'Reminder: {{1}}, the document "{{2}}" (reference {{3}}) is still waiting for you to {{4}} it.',
    ar: 'تذكير: {{1}}، ما زال المستند «{{2}}» (المرجع {{3}}) بانتظار {{4}} منك.',
  },
  voided: {
    en: 'Hello {{1}}, the document "{{2}}" (reference {{3}}) has been cancelled by its sender. No action is needed.',
    ar: 'مرحباً {{1}}، ألغى المرسل المستند «{{2}}» (المرجع {{3}}). لا يلزمك أي إجراء.',
  },
  rejected: {
    en: 'Hello {{1}}, the document "{{2}}" (reference {{3}}) was rejected by an approver. No action is needed.',
    ar: 'مرحباً {{1}}، رُفض المستند «{{2}}» (المرجع {{3}}) من أحد المعتمدين. لا يلزمك أي إجراء.',
  },
  signed_copy: {
    en: 'Hello {{1}}, the document "{{2}}" (reference {{3}}) has been approved. Your signed copy is attached.',
    ar: 'مرحباً {{1}}، اعتُمد المستند «{{2}}» (المرجع {{3}}). مرفق نسختك الموقّعة.',
  },
};

/** {{1}} of a signed copy to a cc recipient given without a name: "Hello there, …" / "مرحباً بك، …". */
export const CC_GREETING: Record<Language, string> = { en: 'there', ar: 'بك' };

export const BUTTON_LABELS: Record<Language, { url: string } & Record<ButtonAction, string>> = {
  en: { url: 'Open document', approve: 'Approve', review: 'Mark reviewed', reject: 'Reject' },
  ar: { url: 'فتح المستند', approve: 'اعتماد', review: 'تمت المراجعة', reject: 'رفض' },
};

export type PreviewButton =
  { type: 'url'; label: string; suffix: string } | { type: 'quick_reply'; label: string; payload: string };

export interface MessagePreview {
  language: Language;
  text: string;
  buttons: PreviewButton[];
}

/** What the approver's phone shows for this notice, buttons in template order. */
export function renderPreview(notice: ApprovalNotice): MessagePreview {
  const params = bodyParameters(notice).map(paramText);
  const text = TEMPLATE_TEXT[notice.kind][notice.language].replace(
    /\{\{(\d)\}\}/g,
    (_, n: string) => params[Number(n) - 1] ?? '',
  );
  const labels = BUTTON_LABELS[notice.language];
  const buttons: PreviewButton[] = [];
  if (isActionable(notice.kind)) {
    const variant = variantFor(notice.actionType);
    if (variant !== 'link') {
      buttons.push(
        { type: 'quick_reply', label: labels[variant], payload: buttonPayload(variant, notice.linkToken) },
        { type: 'quick_reply', label: labels.reject, payload: buttonPayload('reject', notice.linkToken) },
      );
    }
    buttons.push({ type: 'url', label: labels.url, suffix: notice.linkToken });
  }
  return { language: notice.language, text, buttons };
}
