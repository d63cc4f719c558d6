import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerTemplateList, type ListedTemplate } from './graph-templates.ts';

/**
 * A stand-in for Meta's WhatsApp Cloud API (the Graph API) on 127.0.0.1, speaking real HTTP:
 * `POST /{version}/{phone-number-id}/messages` with a Bearer token. It records every request and answers
 * success unless a test scripts otherwise (errors, 429, a hang); and the business account's template list,
 * `GET /{version}/{waba-id}/message_templates`, paged as Meta pages it, from `templates`. Also here: builders for Meta's inbound
 * notification payloads and their `X-Hub-Signature-256`, for tests of the inbound webhook.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON, or undefined when the body was not JSON. */
  body: unknown;
  authorized: boolean;
  /** The wamid the fake answered with, when it answered success. */
  wamid?: string;
}

export type ScriptedResponse =
  /** The normal success answer, with a fresh message id unless `wamid` is given (a provider repeating an id). */
  | { kind: 'ok'; wamid?: string }
  /** A Graph error body `{error:{message,type,code,error_subcode,fbtrace_id}}` with this HTTP status. */
  | { kind: 'graph_error'; status: number; code: number; message?: string; subcode?: number; type?: string }
  /** Any status and body, verbatim (a 500 with an HTML page, a 302, a 200 without an id). */
  | { kind: 'raw'; status: number; body?: string; headers?: Record<string, string> }
  /** Headers are never sent, until the fake closes: the client's time-out must fire. */
  | { kind: 'hang' }
  /** Answers `then` (default ok) after `ms`: a slow but finite answer. */
  | { kind: 'delay'; ms: number; then?: Exclude<ScriptedResponse, { kind: 'delay' }> };

export interface FakeGraphApi {
  /** What WHATSAPP_API_URL should be: `http://127.0.0.1:<port>/v21.0`. */
  apiUrl: string;
  phoneNumberId: string;
  /** The WhatsApp Business account whose `templates` the fake lists. */
  businessAccountId: string;
  accessToken: string;
  /** What the template list answers; tests fill and change it. */
  templates: ListedTemplate[];
  requests: RecordedRequest[];
  /**
   * Queue answers for the next messages to one number, in order; when its queue is empty the answer is success.
   * Keyed by recipient, never "the next request": in a harness several documents share, another document's message
   * (a signed copy or a reminder still on its way) reaching the fake first would take an unkeyed answer.
   */
  scriptFor(to: string, ...responses: ScriptedResponse[]): void;
  reset(): void;
  close(): Promise<void>;
}

export interface FakeGraphApiOptions {
  accessToken?: string;
  phoneNumberId?: string;
  version?: string;
}

export async function startFakeGraphApi(options: FakeGraphApiOptions = {}): Promise<FakeGraphApi> {
  const accessToken = options.accessToken ?? `fake-token-${randomBytes(8).toString('hex')}`;
  const phoneNumberId = options.phoneNumberId ?? String(100000000000000 + Math.floor(Math.random() * 1e12));
  const version = options.version ?? 'v21.0';
  const businessAccountId = String(200000000000000 + Math.floor(Math.random() * 1e12));
  const templates: ListedTemplate[] = [];
  const requests: RecordedRequest[] = [];
  const byRecipient = new Map<string, ScriptedResponse[]>();
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody) as unknown;
      } catch {
        body = undefined;
      }
      const authorized = req.headers.authorization === `Bearer ${accessToken}`;
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        body,
        authorized,
      };
      requests.push(recorded);

      const url = new URL(req.url ?? '/', 'http://fake');
      if (req.method === 'GET' && url.pathname === `/${version}/${businessAccountId}/message_templates`) {
        if (!authorized)
          return sendGraphError(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
        const refused = answerTemplateList(url, templates, res);
        return refused ? sendGraphError(res, 400, 100, refused) : undefined;
      }
      if (req.method !== 'POST' || req.url !== `/${version}/${phoneNumberId}/messages`) {
        return sendGraphError(res, 400, 100, `Unsupported ${req.method} request to ${req.url}`);
      }
      if (!authorized) {
        return sendGraphError(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
      }
      const invalid = validateMessage(body);
      if (invalid) return sendGraphError(res, 400, 100, invalid);
      const to = (body as { to?: unknown } | null)?.to;
      const own = typeof to === 'string' ? byRecipient.get(to)?.shift() : undefined;
      answer(own ?? { kind: 'ok' }, res, recorded);
    });
  });

  function answer(scripted: ScriptedResponse, res: http.ServerResponse, recorded: RecordedRequest): void {
    switch (scripted.kind) {
      case 'ok': {
        const to = (recorded.body as { to: string }).to;
        const wamid = scripted.wamid ?? newWamid();
        recorded.wamid = wamid;
        sendJson(res, 200, {
          messaging_product: 'whatsapp',
          contacts: [{ input: to, wa_id: to.replace(/\D/g, '') }],
          messages: [{ id: wamid, message_status: 'accepted' }],
        });
        return;
      }
      case 'graph_error':
        sendGraphError(
          res,
          scripted.status,
          scripted.code,
          scripted.message ?? `Scripted error ${scripted.code}`,
          {
            ...(scripted.subcode !== undefined && { subcode: scripted.subcode }),
            ...(scripted.type !== undefined && { type: scripted.type }),
          },
        );
        return;
      case 'raw':
        res.writeHead(scripted.status, scripted.headers ?? { 'content-type': 'text/plain' });
        res.end(scripted.body ?? '');
        return;
      case 'hang':
        return;
      case 'delay': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(scripted.then ?? { kind: 'ok' }, res, recorded);
        }, scripted.ms);
        timers.add(timer);
        return;
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    apiUrl: `http://127.0.0.1:${port}/${version}`,
    phoneNumberId,
    businessAccountId,
    templates,
    accessToken,
    requests,
    scriptFor(to, ...responses) {
      byRecipient.set(to, [...(byRecipient.get(to) ?? []), ...responses]);
    },
    reset() {
      byRecipient.clear();
      requests.length = 0;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function validateMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return 'Request body is not JSON';
  const b = body as Record<string, unknown>;
  if (b.messaging_product !== 'whatsapp') return '(#100) The parameter messaging_product is required.';
  if (typeof b.to !== 'string' || !/^\+?\d{6,20}$/.test(b.to)) return '(#100) Invalid parameter: to';
  if (b.type === 'template') {
    const t = b.template as
      { name?: unknown; language?: { code?: unknown }; components?: unknown } | undefined;
    if (typeof t?.name !== 'string' || typeof t.language?.code !== 'string') {
      return '(#100) Invalid parameter: template.name and template.language.code are required';
    }
    if (t.components !== undefined && !Array.isArray(t.components))
      return '(#100) Invalid parameter: template.components must be a list';
    const components = (t.components ?? []) as Record<string, unknown>[];
    // A DOCUMENT header (Meta's media header): one document parameter, by link or by uploaded media id.
    for (const c of components.filter((x) => x.type === 'header')) {
      const params = Array.isArray(c.parameters) ? (c.parameters as Record<string, unknown>[]) : [];
      const doc = params[0]?.type === 'document' ? params[0].document : undefined;
      const problem = documentProblem(doc);
      if (params.length !== 1 || problem)
        return `(#132012) Parameter format does not match: ${problem ?? 'header'}`;
    }
    // As Meta checks them: a button component names its sub_type, its index and its parameters; an
    // authentication template's copy-code button is sent as sub_type "url" with the code as its text parameter.
    for (const c of components.filter((x) => x.type === 'button')) {
      const params = c.parameters as { type?: unknown; text?: unknown; payload?: unknown }[] | undefined;
      if (!['url', 'quick_reply', 'copy_code'].includes(String(c.sub_type)) || typeof c.index !== 'string')
        return '(#100) Invalid parameter: button components need sub_type and index';
      if (!Array.isArray(params) || params.length !== 1)
        return '(#131008) Required parameter is missing: button parameters';
      if (c.sub_type === 'url' && (params[0]?.type !== 'text' || typeof params[0].text !== 'string'))
        return '(#131009) Parameter value is not valid: url button needs a text parameter';
    }
  }
  if (b.type === 'document') {
    const problem = documentProblem(b.document);
    if (problem) return `(#100) Invalid parameter: ${problem}`;
  }
  return undefined;
}

/** Meta's media object for a document: `link` (HTTPS) or `id`, and an optional `filename`. */
function documentProblem(doc: unknown): string | undefined {
  if (typeof doc !== 'object' || doc === null) return 'document is required';
  const d = doc as { link?: unknown; id?: unknown; filename?: unknown };
  const hasLink = typeof d.link === 'string' && /^https?:\/\/\S+$/.test(d.link);
  const hasId = typeof d.id === 'string' && d.id !== '';
  if (hasLink === hasId) return 'document needs exactly one of an http(s) link or a media id';
  if (d.filename !== undefined && (typeof d.filename !== 'string' || d.filename === '')) {
    return 'document.filename';
  }
  return undefined;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendGraphError(
  res: http.ServerResponse,
  status: number,
  code: number,
  message: string,
  extra: { subcode?: number; type?: string } = {},
): void {
  sendJson(res, status, {
    error: {
      message,
      type: extra.type ?? 'OAuthException',
      code,
      ...(extra.subcode !== undefined && { error_subcode: extra.subcode }),
      error_data: { messaging_product: 'whatsapp', details: message },
      fbtrace_id: randomBytes(12).toString('base64url'),
    },
  });
}

/** A message id in Meta's shape: `wamid.` and base64. */
export function newWamid(): string {
  return `wamid.HBgM${randomBytes(30).toString('base64')}`;
}

// ---- Inbound notifications, in Meta's payload shape ----

export interface NotificationContext {
  /** Our business number's id (metadata.phone_number_id). */
  phoneNumberId?: string;
  displayPhoneNumber?: string;
  businessAccountId?: string;
}

interface ReplyInput extends NotificationContext {
  /**
   * The approver's number, digits: `messages[].from` and `contacts[].wa_id`. Absent for a user who adopted a
   * username and withholds the number (Meta's business-scoped user ids).
   */
  from?: string;
  /** `contacts[].wa_id` when it is not `from`. */
  waId?: string;
  /** The business-scoped user id, `contacts[].user_id` (for example `SA.1502576394655843`). */
  userId?: string;
  username?: string;
  /** Inbound message id; a fresh one when absent (pass the same one twice to replay). */
  wamid?: string;
  /** The id of our message whose button was tapped. */
  contextWamid?: string;
  timestamp?: Date;
  profileName?: string;
}

const unix = (d: Date = new Date()) => String(Math.floor(d.getTime() / 1000));

function envelope(ctx: NotificationContext, value: Record<string, unknown>) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: ctx.businessAccountId ?? '102290129340398',
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: {
                display_phone_number: ctx.displayPhoneNumber ?? '15550783881',
                phone_number_id: ctx.phoneNumberId ?? '106540352242922',
              },
              ...value,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

function inboundMessage(input: ReplyInput, type: string, content: Record<string, unknown>) {
  return envelope(input, {
    contacts: [
      {
        profile: {
          name: input.profileName ?? 'Approver',
          ...(input.username !== undefined && { username: input.username }),
        },
        ...((input.waId ?? input.from) !== undefined && { wa_id: input.waId ?? input.from }),
        ...(input.userId !== undefined && { user_id: input.userId }),
      },
    ],
    messages: [
      {
        ...(input.contextWamid !== undefined && {
          context: { from: input.displayPhoneNumber ?? '15550783881', id: input.contextWamid },
        }),
        ...(input.from !== undefined && { from: input.from }),
        id: input.wamid ?? newWamid(),
        timestamp: unix(input.timestamp),
        type,
        ...content,
      },
    ],
  });
}

/** A tap on a template quick-reply button: `messages[].button.payload`. */
export function buttonReplyNotification(input: ReplyInput & { payload: string; text?: string }) {
  return inboundMessage(input, 'button', {
    button: { payload: input.payload, text: input.text ?? input.payload },
  });
}

/** A tap on an interactive reply button: `messages[].interactive.button_reply.id`. */
export function interactiveReplyNotification(input: ReplyInput & { id: string; title?: string }) {
  return inboundMessage(input, 'interactive', {
    interactive: { type: 'button_reply', button_reply: { id: input.id, title: input.title ?? input.id } },
  });
}

/** A plain text message, which the webhook ignores. */
export function textMessageNotification(input: ReplyInput & { text: string }) {
  return inboundMessage(input, 'text', { text: { body: input.text } });
}

export interface StatusInput extends NotificationContext {
  /** Our outbound message's id. */
  wamid: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  recipient: string;
  timestamp?: Date;
  /** For `failed`; defaults to 131026 "Message undeliverable". */
  error?: { code: number; title: string; details?: string };
}

/** A delivery status notification: `statuses[]`. */
export function statusNotification(input: StatusInput) {
  const failed = input.status === 'failed';
  const error = input.error ?? {
    code: 131026,
    title: 'Message undeliverable',
    details: 'Message Undeliverable.',
  };
  return envelope(input, {
    statuses: [
      {
        id: input.wamid,
        status: input.status,
        timestamp: unix(input.timestamp),
        recipient_id: input.recipient,
        ...(!failed && {
          ...(input.status === 'sent' && {
            conversation: {
              id: randomBytes(16).toString('hex'),
              expiration_timestamp: unix(new Date(Date.now() + 86_400_000)),
              origin: { type: 'utility' },
            },
          }),
          pricing: { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' },
        }),
        ...(failed && {
          errors: [
            {
              code: error.code,
              title: error.title,
              message: error.title,
              error_data: { details: error.details ?? error.title },
              href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
            },
          ],
        }),
      },
    ],
  });
}

export interface SignedRequest {
  body: Buffer;
  headers: { 'content-type': string; 'x-hub-signature-256': string };
}

/** The bytes Meta would POST and their `X-Hub-Signature-256` under the app secret. */
export function signedNotification(payload: unknown, appSecret: string): SignedRequest {
  const body = Buffer.from(JSON.stringify(payload));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      // Computed here, not with the service's own helper, so a test cannot pass by sharing a bug.
      'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`,
    },
  };
}

/** POSTs a signed notification to the service's webhook, as Meta would. */
export async function postSignedNotification(
  url: string,
  payload: unknown,
  appSecret: string,
): Promise<Response> {
  const { body, headers } = signedNotification(payload, appSecret);
  return fetch(url, { method: 'POST', headers, body });
}
