import { request, type Dispatcher } from 'undici';
import type { Config } from '../config.ts';
import type { Language } from '../domain/model.ts';
import type { Logger } from '../logger.ts';

/**
 * The one-time code of a verified approver, sent as a WhatsApp authentication template with a
 * copy-code button. Meta fixes such a template's text ("<code> is your verification code."); the request names
 * the code twice: as the body's parameter and as the parameter of button 0, whose sub_type is `url` (Meta turns
 * the registered `otp`/`copy_code` button into a URL button). src/whatsapp/README.md lists the template.
 */
export interface GraphOtpMessage {
  messaging_product: 'whatsapp';
  recipient_type: 'individual';
  to: string;
  type: 'template';
  template: {
    name: string;
    language: { code: string };
    components: [
      { type: 'body'; parameters: [{ type: 'text'; text: string }] },
      { type: 'button'; sub_type: 'url'; index: '0'; parameters: [{ type: 'text'; text: string }] },
    ];
  };
}

export function buildOtpMessage(input: {
  phone: string;
  code: string;
  template: string;
  languageCode: string;
}): GraphOtpMessage {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: input.phone,
    type: 'template',
    template: {
      name: input.template,
      language: { code: input.languageCode },
      components: [
        { type: 'body', parameters: [{ type: 'text', text: input.code }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: input.code }] },
      ],
    },
  };
}

export interface OtpSender {
  /** Resolves once WhatsApp accepted the message; throws when it did not (the caller answers 502). */
  send(input: { phone: string; language: Language; code: string }): Promise<void>;
}

/**
 * Cloud: `POST {apiUrl}/{phoneNumberId}/messages`. Console (development): the code is logged, nothing leaves
 * the machine, like the console provider's approval links.
 */
export function createOtpSender(
  config: Pick<Config, 'whatsapp' | 'otp'>,
  deps: { logger: Pick<Logger, 'info'>; dispatcher?: Dispatcher },
): OtpSender {
  const w = config.whatsapp;
  const message = (input: { phone: string; language: Language; code: string }) =>
    buildOtpMessage({
      phone: input.phone,
      code: input.code,
      template: config.otp.template,
      languageCode: w.templates.languages[input.language],
    });
  if (w.provider === 'console' || !w.phoneNumberId || !w.accessToken) {
    return {
      send(input) {
        deps.logger.info(
          { whatsapp: { to: input.phone, template: config.otp.template, code: input.code } },
          'WhatsApp one-time code (console provider, not sent)',
        );
        return Promise.resolve();
      },
    };
  }
  const url = `${w.apiUrl.replace(/\/+$/, '')}/${encodeURIComponent(w.phoneNumberId)}/messages`;
  const accessToken = w.accessToken;
  return {
    async send(input) {
      const res = await request(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'user-agent': 'Wathiq',
        },
        body: JSON.stringify(message(input)),
        headersTimeout: w.timeoutMs,
        bodyTimeout: w.timeoutMs,
        signal: AbortSignal.timeout(w.timeoutMs),
        ...(deps.dispatcher && { dispatcher: deps.dispatcher }),
      });
      await res.body.text();
      if (res.statusCode < 200 || res.statusCode >= 300)
        throw new Error(`WhatsApp Cloud API answered HTTP ${res.statusCode} to the one-time code`);
    },
  };
}
