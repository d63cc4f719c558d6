import { LANGUAGES, NOTICE_KINDS, type Language } from '../domain/model.ts';
import { BUTTON_LABELS, TEMPLATE_TEXT, isActionable, type ButtonVariant } from './templates.ts';
import type { WhatsAppTemplateConfig } from './types.ts';

/** A button as Meta lists it in a template's BUTTONS component. */
export interface CatalogButton {
  type: 'QUICK_REPLY' | 'URL';
  text: string;
}

/** One message template Wathiq sends, in one language, as it must be registered with Meta. */
export interface ExpectedTemplate {
  name: string;
  /** Meta's language code (WHATSAPP_TEMPLATE_LANGUAGE_*). */
  language: string;
  category: 'UTILITY' | 'AUTHENTICATION';
  /** The BODY text; undefined for the authentication template, whose text Meta writes. */
  body?: string;
  /** DOCUMENT for the signed copy, which carries the signed PDF. */
  header?: 'DOCUMENT';
  buttons: CatalogButton[];
}

const VARIANTS: readonly ButtonVariant[] = ['link', 'approve', 'review'];

function buttonsFor(variant: ButtonVariant, language: Language): CatalogButton[] {
  const labels = BUTTON_LABELS[language];
  const url: CatalogButton = { type: 'URL', text: labels.url };
  if (variant === 'link') return [url];
  return [{ type: 'QUICK_REPLY', text: labels[variant] }, { type: 'QUICK_REPLY', text: labels.reject }, url];
}

/**
 * Every template the configuration names, in every language Wathiq writes: the approval request and the reminder
 * in their three button layouts, the three notices, and the one-time code. What `templates.ts` sends is what
 * this lists, so a template registered differently shows up before a message is refused.
 */
export function expectedTemplates(
  templates: WhatsAppTemplateConfig,
  otpTemplate: string,
): ExpectedTemplate[] {
  const out: ExpectedTemplate[] = [];
  for (const language of LANGUAGES) {
    const code = templates.languages[language];
    for (const kind of NOTICE_KINDS) {
      const body = TEMPLATE_TEXT[kind][language];
      if (isActionable(kind)) {
        const names = kind === 'approval_request' ? templates.approvalRequest : templates.reminder;
        for (const variant of VARIANTS) {
          out.push({
            name: names[variant],
            language: code,
            category: 'UTILITY',
            body,
            buttons: buttonsFor(variant, language),
          });
        }
        continue;
      }
      const name =
        kind === 'voided'
          ? templates.voided
          : kind === 'rejected'
            ? templates.rejected
            : templates.signedCopy;
      out.push({
        name,
        language: code,
        category: 'UTILITY',
        body,
        ...(kind === 'signed_copy' && { header: 'DOCUMENT' as const }),
        buttons: [],
      });
    }
    out.push({ name: otpTemplate, language: code, category: 'AUTHENTICATION', buttons: [] });
  }
  return out;
}
