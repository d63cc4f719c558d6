import { request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { clientSpan, recordHttpOutcome, serverAttributes } from '../tracing/spans.ts';
import { GRAPH_ERROR_CODES, isRetryableGraphFailure } from './graph-errors.ts';
import { buildTemplateMessage } from './templates.ts';
import {
  WhatsAppSendError,
  type ApprovalNotice,
  type WhatsAppProvider,
  type WhatsAppTemplateConfig,
} from './types.ts';

export interface CloudProviderOptions {
  /** `https://graph.facebook.com/v21.0` */
  apiUrl: string;
  phoneNumberId: string;
  accessToken: string;
  /** Deadline for the whole call: connect, headers and body. */
  timeoutMs: number;
  templates: WhatsAppTemplateConfig;
  /** undici dispatcher (an Agent with its own pool, or a MockAgent); the global one when absent. */
  dispatcher?: Dispatcher;
}

const successSchema = z.object({
  messages: z.array(z.object({ id: z.string().min(1) })).min(1),
});

const graphErrorSchema = z.object({
  error: z.object({
    message: z.string().optional(),
    type: z.string().optional(),
    code: z.number().int().optional(),
    error_subcode: z.number().int().optional(),
    error_data: z.object({ details: z.string().optional() }).optional(),
    fbtrace_id: z.string().optional(),
  }),
});

const URL_TEMPLATE = '/{phone_number_id}/messages';
const SPAN_NAME = `POST ${URL_TEMPLATE}`;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Sends template messages through Meta's WhatsApp Cloud API:
 * `POST {apiUrl}/{phoneNumberId}/messages` with `Authorization: Bearer {accessToken}`. Redirects are not
 * followed (undici's `request` never does without the redirect interceptor), and every failure becomes a
 * WhatsAppSendError classified by `graph-errors.ts`.
 */
export function createCloudProvider(options: CloudProviderOptions): WhatsAppProvider {
  const url = `${options.apiUrl.replace(/\/+$/, '')}/${encodeURIComponent(options.phoneNumberId)}/messages`;
  const spanAttributes = {
    'http.request.method': 'POST',
    'url.template': URL_TEMPLATE,
    'peer.service': 'whatsapp-cloud-api',
    ...serverAttributes(url),
  };
  const headers = {
    authorization: `Bearer ${options.accessToken}`,
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': 'Wathiq',
  };

  return {
    name: 'cloud',
    send(notice: ApprovalNotice): Promise<{ wamid: string }> {
      // One CLIENT span per call, named by the URL's template: the phone number id, the recipient and the
      // message stay out of the trace.
      return clientSpan(SPAN_NAME, spanAttributes, async (span) => {
        try {
          const sent = await sendOnce(notice);
          recordHttpOutcome(span, { status: sent.status });
          return { wamid: sent.wamid };
        } catch (err) {
          if (err instanceof WhatsAppSendError)
            recordHttpOutcome(span, { status: err.httpStatus, errorType: err.reason });
          throw err;
        }
      });
    },
  };

  async function sendOnce(notice: ApprovalNotice): Promise<{ wamid: string; status: number }> {
    const body = JSON.stringify(buildTemplateMessage(notice, options.templates));
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(options.dispatcher && { dispatcher: options.dispatcher }),
      });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      retryAfter = Array.isArray(ra) ? ra[0] : ra;
      text = await res.body.text();
    } catch (err) {
      throw transportError(err, options.timeoutMs);
    }

    if (status >= 200 && status < 300) {
      const parsed = successSchema.safeParse(safeJson(text));
      if (!parsed.success) {
        // The message may have gone out; retrying could send it twice, so a person looks at it instead.
        throw new WhatsAppSendError(`WhatsApp Cloud API answered ${status} without a message id`, {
          retryable: false,
          reason: 'invalid_response',
          httpStatus: status,
        });
      }
      return { wamid: parsed.data.messages[0]!.id, status };
    }
    throw httpError(status, text, retryAfter);
  }
}

function httpError(status: number, text: string, retryAfter: string | undefined): WhatsAppSendError {
  const retryAfterMs = parseRetryAfter(retryAfter);
  if (status >= 300 && status < 400) {
    return new WhatsAppSendError(
      `WhatsApp Cloud API answered a redirect (${status}); redirects are not followed`,
      {
        retryable: false,
        reason: 'http_error',
        httpStatus: status,
      },
    );
  }
  const parsed = graphErrorSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    return new WhatsAppSendError(`WhatsApp Cloud API answered HTTP ${status}`, {
      retryable: isRetryableGraphFailure(status, undefined),
      reason: 'http_error',
      httpStatus: status,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }
  const e = parsed.data.error;
  const title = e.code === undefined ? undefined : GRAPH_ERROR_CODES[e.code]?.title;
  const summary = e.message ?? title ?? 'error';
  return new WhatsAppSendError(
    `WhatsApp Cloud API refused the message (HTTP ${status}${e.code === undefined ? '' : `, code ${e.code}`}): ${summary}`,
    {
      retryable: isRetryableGraphFailure(status, e.code),
      reason: e.code === undefined ? 'http_error' : 'graph_error',
      httpStatus: status,
      ...(e.code !== undefined && { code: e.code }),
      ...(e.error_subcode !== undefined && { subcode: e.error_subcode }),
      ...(e.type !== undefined && { type: e.type }),
      ...(e.error_data?.details !== undefined && { details: e.error_data.details }),
      ...(e.fbtrace_id !== undefined && { fbtraceId: e.fbtrace_id }),
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    },
  );
}

function transportError(err: unknown, timeoutMs: number): WhatsAppSendError {
  const name = err instanceof Error ? err.name : '';
  const code = (err as { code?: unknown } | null)?.code;
  if (name === 'TimeoutError' || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
    return new WhatsAppSendError(`WhatsApp Cloud API did not answer within ${timeoutMs} ms`, {
      retryable: true,
      reason: 'timeout',
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new WhatsAppSendError(`WhatsApp Cloud API unreachable: ${message}`, {
    retryable: true,
    reason: 'network',
    cause: err,
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
