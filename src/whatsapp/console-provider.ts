import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.ts';
import {
  buildTemplateMessage,
  renderPreview,
  type GraphTemplateMessage,
  type MessagePreview,
} from './templates.ts';
import type { ApprovalNotice, WhatsAppProvider, WhatsAppTemplateConfig } from './types.ts';

export interface ConsoleMessage {
  wamid: string;
  notice: ApprovalNotice;
  /** The request the Cloud API provider would have sent. */
  request: GraphTemplateMessage;
  preview: MessagePreview;
  /** `{publicBaseUrl}/a/{token}` for actionable notices, when a base URL was given. */
  link?: string;
}

export interface ConsoleProviderOptions {
  logger: Pick<Logger, 'info'>;
  templates: WhatsAppTemplateConfig;
  /** Used only to print the approval link in the log line. */
  publicBaseUrl?: string;
  /**
   * Called with every message, e.g. to keep them in memory in a test. The outbox of `/dev/inbox` does not need
   * it: `sendNotice` records every outbound message, whatever the provider, in `whatsapp_messages`.
   */
  record?: (message: ConsoleMessage) => void | Promise<void>;
}

/**
 * The development provider (docs/product-rules.md §5): nothing leaves the machine. Each message is logged with its
 * text, buttons and link (the link's token redacted by the logger, the buttons' left out here: the dev inbox has
 * them), and gets a local id `wamid.console.<random>`.
 */
export function createConsoleProvider(options: ConsoleProviderOptions): WhatsAppProvider {
  return {
    name: 'console',
    async send(notice: ApprovalNotice): Promise<{ wamid: string }> {
      const wamid = `wamid.console.${randomBytes(16).toString('base64url')}`;
      const request = buildTemplateMessage(notice, options.templates);
      const preview = renderPreview(notice);
      const hasLink = preview.buttons.some((b) => b.type === 'url');
      const link =
        hasLink && options.publicBaseUrl ? `${options.publicBaseUrl}/a/${notice.linkToken}` : undefined;
      options.logger.info(
        {
          whatsapp: {
            wamid,
            to: notice.phone,
            kind: notice.kind,
            template: request.template.name,
            language: request.template.language.code,
            text: preview.text,
            buttons: preview.buttons.map((b) => b.label),
            ...(link && { link }),
          },
        },
        'WhatsApp message (console provider, not sent)',
      );
      await options.record?.({ wamid, notice, request, preview, ...(link && { link }) });
      return { wamid };
    },
  };
}
