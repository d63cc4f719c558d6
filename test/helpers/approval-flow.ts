import { randomBytes } from 'node:crypto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import {
  buttonReplyNotification,
  postSignedNotification,
  startFakeGraphApi,
  type FakeGraphApi,
  type RecordedRequest,
} from '../fakes/fake-graph-api.ts';
import { documentForm, type FormValue } from './multipart.ts';
import { makePdf } from './pdf.ts';
import type { Logger } from '../../src/logger.ts';
import { startTestService, type TestAccount, type TestService } from './test-service.ts';
import { approverLinkContext } from '../../src/db/sealed-columns.ts';

export interface FlowHarness {
  service: TestService;
  account: TestAccount;
  graph: FakeGraphApi;
  appSecret: string;
  close(): Promise<void>;
}

/** The real service with the Cloud API WhatsApp provider pointed at a fake Graph API on loopback. */
export async function startFlowHarness(
  options: { env?: Record<string, string>; worker?: boolean; traceTo?: SpanExporter; logger?: Logger } = {},
): Promise<FlowHarness> {
  const graph = await startFakeGraphApi();
  const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;
  const service = await startTestService({
    ...(options.worker === false ? { worker: false } : {}),
    ...(options.traceTo && { traceTo: options.traceTo }),
    ...(options.logger && { logger: options.logger }),
    env: {
      WHATSAPP_PROVIDER: 'cloud',
      WHATSAPP_API_URL: graph.apiUrl,
      WHATSAPP_PHONE_NUMBER_ID: graph.phoneNumberId,
      WHATSAPP_ACCESS_TOKEN: graph.accessToken,
      WHATSAPP_APP_SECRET: appSecret,
      WHATSAPP_VERIFY_TOKEN: 'verify-me',
      ...options.env,
    },
  });
  const account = await service.createAccount({ plan: 'enterprise' });
  return {
    service,
    account,
    graph,
    appSecret,
    async close() {
      await service.close();
      await graph.close();
    },
  };
}

export interface ApproverSpec {
  name: string;
  phone: string;
  action_type: 'sign' | 'stamp' | 'approve_only' | 'review_only';
  order?: number;
}

export interface CreatedDocument {
  id: string;
  reference: string;
  status: string;
  approvers: { id: string; phone: string; action_type: string; order_index: number }[];
}

export async function createDocument(
  h: FlowHarness,
  options: {
    workflowType: 'sequential' | 'parallel';
    approvers: ApproverSpec[];
    title?: string;
    /** The PDF (default: a two-page contract). */
    file?: Buffer;
    /** More form fields, e.g. `reminders[max]`. */
    fields?: Record<string, FormValue>;
  },
): Promise<CreatedDocument> {
  const form = documentForm(
    {
      title: options.title ?? 'عقد توريد — Supply contract',
      workflow_type: options.workflowType,
      ...options.fields,
    },
    {
      approvers: options.approvers.map((a): Record<string, FormValue> => ({ ...a })),
      file: options.file ?? (await makePdf(2, 'Contract')),
    },
  );
  // As a client that honours Retry-After: an account may have only a few uploads in flight at once (503 past it).
  for (let attempt = 1; ; attempt++) {
    const res = await h.service.request('/documents', { method: 'POST', account: h.account, body: form });
    const retryAfter = Number(res.headers.get('retry-after'));
    if (res.status === 503 && retryAfter > 0 && attempt < 30) {
      await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      continue;
    }
    const body = (await res.json()) as { data: CreatedDocument };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return body.data;
  }
}

export async function send(h: FlowHarness, documentId: string): Promise<Response> {
  return h.service.request(`/documents/${documentId}/send`, { method: 'POST', account: h.account });
}

/**
 * A manual reminder as a client that honours `Retry-After` sends it: while an automatic reminder to the same
 * approver is still going out, the remind answers 429 "being sent right now" (one reminder to an approver at a
 * time), and the call is made again once the wait it names has passed (three tries at most). Any other answer is
 * returned as it came.
 */
export async function remindAsAClientWould(h: FlowHarness, approverId: string): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await h.service.request(`/approvers/${approverId}/remind`, {
      method: 'POST',
      account: h.account,
    });
    if (res.status !== 429 || attempt === 3) return res;
    const body = await res.clone().text();
    if (!body.includes('being sent right now')) return res;
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? '1')));
  }
}

export interface DocumentStatusView {
  status: string;
  progress: { completed: number; total: number };
  current_approver_ids: string[];
  approvers: {
    id: string;
    status: string;
    acted_at: string | null;
    action_channel: string | null;
    notification: { status: string | null; error: unknown } | null;
  }[];
}

export async function statusOf(h: FlowHarness, documentId: string): Promise<DocumentStatusView> {
  const res = await h.service.request(`/documents/${documentId}/status`, { account: h.account });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: DocumentStatusView }).data;
}

/** The Cloud API requests the fake received for `phone`, in order. */
export const messagesTo = (h: FlowHarness, phone: string): RecordedRequest[] =>
  h.graph.requests.filter((r) => r.authorized && (r.body as { to?: string } | undefined)?.to === phone);

/** The one-time codes sent to `phone` (WhatsApp authentication template `wathiq_otp`), oldest first. */
export const otpCodesTo = (h: FlowHarness, phone: string): string[] =>
  messagesTo(h, phone)
    .map(
      (r) =>
        (
          r.body as {
            template: { name: string; components: { type: string; parameters: { text?: string }[] }[] };
          }
        ).template,
    )
    .filter((t) => t.name === 'wathiq_otp')
    .map((t) => t.components.find((c) => c.type === 'body')!.parameters[0]!.text!);

/** Waits for the `n`-th message (1-based) to `phone` after `since` earlier ones. */
export const nthMessageTo = (
  h: FlowHarness,
  phone: string,
  since: number,
  n = 1,
  timeoutMs?: number,
): Promise<RecordedRequest> => eventually(() => messagesTo(h, phone)[since + n - 1], timeoutMs);

/**
 * The approval requests (and reminders) for `documentId` sent to `phone`, told apart by their link tokens: a test
 * that counts every message to a number also sees late notices of an earlier test's documents (a void notice, say).
 */
export async function requestsFor(
  h: FlowHarness,
  phone: string,
  documentId: string,
): Promise<RecordedRequest[]> {
  const tokens = new Set((await storedLinkTokens(h.service, { document_id: documentId })).values());
  return messagesTo(h, phone).filter((r) => {
    const token = buttonsOf(r).find((b) => b.sub_type === 'url')?.parameters[0]?.text;
    return token !== undefined && tokens.has(token);
  });
}

/**
 * The link tokens the database keeps for the approvers matching `where` (by approver id), opened from their sealed
 * copies: the table itself holds only their digests.
 */
export async function storedLinkTokens(
  service: Pick<TestService, 'database' | 'deps'>,
  where: Record<string, string>,
): Promise<Map<string, string>> {
  const rows = await service.database
    .db('approvers')
    .where(where)
    .whereNotNull('link_token_sealed')
    .select<{ id: string; link_token_sealed: string }[]>('id', 'link_token_sealed');
  return new Map(
    rows.map((r) => [r.id, service.deps.secrets.open(r.link_token_sealed, approverLinkContext(r.id))]),
  );
}

/** The activity types the document's workflow scheduled (ordinary activities, not local ones), in order. */
export async function scheduledActivities(h: FlowHarness, documentId: string): Promise<string[]> {
  const history = await h.service.temporal.client.workflow.getHandle(`document-${documentId}`).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((name): name is string => typeof name === 'string');
}

/**
 * The local activities `documentId`'s workflow ran, in order: one name per `core_local_activity` marker (each
 * marker's `data` payload names its activity type), with whether it failed.
 */
export async function localActivities(
  h: FlowHarness,
  documentId: string,
): Promise<{ name: string; failed: boolean }[]> {
  const history = await h.service.temporal.client.workflow.getHandle(`document-${documentId}`).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = marker.details?.['data']?.payloads?.[0]?.data;
    if (!data) throw new Error('a local activity marker without its data payload');
    const { activity_type: name } = JSON.parse(Buffer.from(data).toString('utf8')) as {
      activity_type: string;
    };
    return [{ name, failed: marker.failure != null }];
  });
}

/** Waits for the first approval request of `documentId` to `phone`. */
export const requestFor = (
  h: FlowHarness,
  phone: string,
  documentId: string,
  timeoutMs?: number,
): Promise<RecordedRequest> =>
  eventually(async () => (await requestsFor(h, phone, documentId))[0], timeoutMs);

interface TemplateButton {
  type: 'button';
  sub_type: 'url' | 'quick_reply';
  parameters: { type: string; text?: string; payload?: string }[];
}
const buttonsOf = (r: RecordedRequest): TemplateButton[] =>
  ((r.body as { template?: { components?: TemplateButton[] } }).template?.components ?? []).filter(
    (c) => c.type === 'button',
  );

/** The approval link token carried by the message's URL button. */
export function linkTokenOf(r: RecordedRequest): string {
  const url = buttonsOf(r).find((b) => b.sub_type === 'url');
  const token = url?.parameters[0]?.text;
  if (!token) throw new Error('message has no URL button');
  return token;
}

export const quickRepliesOf = (r: RecordedRequest): string[] =>
  buttonsOf(r)
    .filter((b) => b.sub_type === 'quick_reply')
    .map((b) => b.parameters[0]!.payload!);

export const templateNameOf = (r: RecordedRequest): string =>
  (r.body as { template: { name: string } }).template.name;

/** Taps a WhatsApp button as the phone would: a Meta-signed notification to the service's webhook. */
export function tapButton(
  h: FlowHarness,
  input: { from?: string; waId?: string; userId?: string; payload: string; wamid?: string },
): Promise<Response> {
  return postSignedNotification(
    `${h.service.baseUrl}/webhooks/whatsapp`,
    buttonReplyNotification({
      ...(input.from !== undefined && { from: input.from }),
      ...(input.waId !== undefined && { waId: input.waId }),
      ...(input.userId !== undefined && { userId: input.userId }),
      payload: input.payload,
      ...(input.wamid ? { wamid: input.wamid } : {}),
    }),
    h.appSecret,
  );
}

export function pagePost(
  h: FlowHarness,
  token: string,
  action: 'complete' | 'reject',
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${h.service.api.url}/a/${token}/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'WathiqTest/1.0 (iPhone)', ...headers },
    body: JSON.stringify(body),
  });
}

/** Polls until `check` returns a value (workflow steps after an update happen asynchronously). */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `condition not met within ${timeoutMs} ms${last instanceof Error ? `: ${last.message}` : ''}`,
  );
}

/** A small real PNG (a 40×16 wavy stroke), as a data URL. */
export const TINY_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACgAAAAQCAYAAABk1z2tAAAAdUlEQVR4nN2UMQ4AIAgDmX2Jr/P/m24OxAQoJRqHTgbvRFRaH/Jyrgt8KzhVKuAuhlVUIRlieAtZomGGt90MSYihF9Iz46gNMQQARiWRQ+0aAbqBdgRioMNuwVkPKyV4EqF/T1lBSzK9P0OQeaVlgmW5LmBlAfM7B6eIysSKAAAAAElFTkSuQmCC';

export const PHONES = {
  saudiA: '966501234567',
  saudiB: '966551234568',
  saudiC: '966561234569',
  uk: '447911123456',
};
