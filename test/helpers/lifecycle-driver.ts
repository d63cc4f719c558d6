import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import type { Knex } from '../../src/db/knex.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import {
  buttonReplyNotification,
  newWamid,
  signedNotification,
  type FakeGraphApi,
  type RecordedRequest,
} from '../fakes/fake-graph-api.ts';
import type { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { eventually } from './approval-flow.ts';
import { makePdf } from './pdf.ts';
import { pdfsig } from './pdf-tools.ts';

/**
 * Drives documents through their whole lifecycle against one or more API processes (requests spread over them
 * in turn), the approvers played from the messages arriving at the fake Graph API, and checks what every fault
 * and scale-out test promises at the end: every document approved, nobody notified twice, each webhook event
 * under one delivery id, reference numbers unique and without gaps.
 */

export type ApproverAction = 'sign' | 'approve_only' | 'review_only';

export interface DriverOptions {
  /** Base URLs of the API processes, `http://127.0.0.1:<port>` (no `/api/v1`). */
  apis: string[];
  db: Knex;
  graph: FakeGraphApi;
  appSecret: string;
}

export interface DrivenDocument {
  id: string;
  reference: string;
  phones: string[];
}

export interface LifecycleDriver {
  accountId: string;
  authorization: string;
  documents: DrivenDocument[];
  /** The next API base URL, in turn. */
  nextApi(): string;
  /** An API request with the account's key, to the next API unless `api` is given. */
  request(pathname: string, init?: RequestInit & { api?: string }): Promise<Response>;
  /** Registers a webhook for every document event at `receiver`. */
  registerWebhook(receiver: WebhookReceiver): Promise<void>;
  /** Creates a document (approvers with fresh phone numbers) and sends it; retries 503s until `retryUntil`. */
  createAndSend(
    workflowType: 'sequential' | 'parallel',
    actions: readonly ApproverAction[],
  ): Promise<DrivenDocument>;
  /** Starts acting on every approval request that arrives at the fake Graph API. */
  startPlaying(): void;
  /** While paused, arriving messages are queued and acted on after `resume`. */
  pause(): void;
  resume(): void;
  /**
   * Stops playing and waits for actions in flight. `abandon` (an afterAll after a failure, a dependency perhaps
   * still down): an action being retried gives up after its current try instead of retrying for minutes.
   */
  stop(options?: { abandon?: boolean }): Promise<void>;
  /** Actions that failed for good (not a 503 or a refused connection, which are retried). */
  failures: string[];
  /** Answers the player saw while acting, by status (503s while a dependency was down, for instance). */
  answers: Map<string, number>;
}

let phoneSeq = Math.floor(Math.random() * 900_000);
const freshPhone = () => `96650${String(1_000_000 + (phoneSeq++ % 9_000_000)).slice(-7)}`;

interface TemplateComponent {
  type: string;
  sub_type?: string;
  parameters: { text?: string; payload?: string }[];
}
const templateOf = (r: RecordedRequest) =>
  (r.body as { template?: { name: string; components?: TemplateComponent[] } } | undefined)?.template;

const transient = (status: number) => status === 503 || status === 502 || status === 504 || status === 429;

export async function createDriver(options: DriverOptions): Promise<LifecycleDriver> {
  const account = await accountsStore(options.db).create({
    name: 'Fault Co',
    email: `faults-${randomBytes(6).toString('hex')}@example.test`,
    passwordHash: await hashPassword('correct horse battery staple'),
    plan: 'enterprise',
  });
  const key = await issueApiKey(options.db, { accountId: account.id, name: 'faults' });
  const authorization = `Bearer ${key.apiKey.key}:${key.secret}`;
  let turn = 0;
  const nextApi = () => options.apis[turn++ % options.apis.length]!;
  const actionOf = new Map<string, ApproverAction>();
  const pdf = await makePdf(1, 'Fault');
  const documents: DrivenDocument[] = [];
  const failures: string[] = [];
  const answers = new Map<string, number>();
  const count = (what: string) => answers.set(what, (answers.get(what) ?? 0) + 1);
  /** Set by stop({ abandon: true }): an action still being retried gives up after its current try. */
  let stopped = false;

  const request = (pathname: string, init: RequestInit & { api?: string } = {}) => {
    const { api, headers, ...rest } = init;
    const h = new Headers(headers);
    h.set('authorization', authorization);
    if (typeof rest.body === 'string') h.set('content-type', 'application/json');
    return fetch(`${api ?? nextApi()}/api/v1${pathname}`, { ...rest, headers: h });
  };

  /**
   * Runs `call` until it answers something other than a transient status or a refused connection. An action
   * answered 503 because the workflow did not answer within the approval client's deadline may still have been
   * applied: its retry then hears "already done" (`alreadyDone`: 410 for the page, 409 for send), which is the
   * action's success.
   */
  const persist = async (
    what: string,
    call: () => Promise<Response>,
    alreadyDone?: number,
  ): Promise<Response> => {
    const deadline = Date.now() + 240_000;
    let retried = false;
    for (;;) {
      try {
        const res = await call();
        count(`${what} ${res.status}${retried ? ' (retry)' : ''}`);
        if (retried && res.status === alreadyDone) return new Response('{}', { status: 200 });
        if (!transient(res.status) || Date.now() > deadline || stopped) return res;
        retried = true;
        await res.arrayBuffer();
      } catch (err) {
        count(`${what} ${(err as Error).message}`);
        if (Date.now() > deadline || stopped) throw err;
        retried = true;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  const act = async (r: RecordedRequest) => {
    const to = (r.body as { to: string }).to;
    const template = templateOf(r);
    const action = actionOf.get(to);
    if (!action || !template || !/approval_request/.test(template.name)) return;
    const buttons = (template.components ?? []).filter((c) => c.type === 'button');
    if (action === 'sign') {
      const token = buttons.find((b) => b.sub_type === 'url')!.parameters[0]!.text!;
      const res = await persist(
        'page',
        () =>
          fetch(`${nextApi()}/a/${token}/complete`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'user-agent': 'WathiqFaultTest/1.0' },
            body: JSON.stringify({ typed_name: 'Fault Signer' }),
          }),
        410,
      );
      if (res.status !== 200) failures.push(`page ${to}: ${res.status} ${await res.text()}`);
    } else {
      const payload = buttons.find((b) => b.sub_type === 'quick_reply')!.parameters[0]!.payload!;
      // The same inbound message id on every retry, as Meta redelivers: it acts at most once.
      const notification = buttonReplyNotification({ from: to, payload, wamid: newWamid() });
      const res = await persist('button', () => {
        const { body, headers } = signedNotification(notification, options.appSecret);
        return fetch(`${nextApi()}/api/v1/webhooks/whatsapp`, { method: 'POST', headers, body });
      });
      if (res.status !== 200) failures.push(`button ${to}: ${res.status} ${await res.text()}`);
    }
  };

  let seen = 0;
  let playing = false;
  let paused = false;
  let loop: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();

  return {
    accountId: account.id,
    authorization,
    documents,
    nextApi,
    request,
    failures,
    answers,
    async registerWebhook(receiver) {
      const res = await request('/webhooks', {
        method: 'POST',
        body: JSON.stringify({
          url: receiver.url,
          events: ['document.sent', 'approver.completed', 'document.approved'],
        }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const { data } = (await res.json()) as { data: { secret: string } };
      receiver.setSecret(data.secret);
    },
    async createAndSend(workflowType, actions) {
      const phones = actions.map(() => freshPhone());
      const form = new FormData();
      form.append('title', `Fault test ${documents.length + 1}`);
      form.append('workflow_type', workflowType);
      actions.forEach((action, n) => {
        actionOf.set(phones[n]!, action);
        form.append(`approvers[${n}][name]`, `Approver ${n + 1}`);
        form.append(`approvers[${n}][phone]`, phones[n]!);
        form.append(`approvers[${n}][action_type]`, action);
      });
      form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'fault.pdf');
      // One idempotency key for every retry of the create: a 503 retried never makes two documents.
      const idempotencyKey = randomBytes(16).toString('hex');
      const created = await persist('create', () =>
        request('/documents', { method: 'POST', body: form, headers: { 'idempotency-key': idempotencyKey } }),
      );
      expect(created.status, await created.clone().text()).toBe(201);
      const { data } = (await created.json()) as { data: { id: string; reference: string } };
      const sent = await persist(
        'send',
        () => request(`/documents/${data.id}/send`, { method: 'POST' }),
        409,
      );
      expect(sent.status, await sent.clone().text()).toBe(200);
      const doc = { id: data.id, reference: data.reference, phones };
      documents.push(doc);
      return doc;
    },
    startPlaying() {
      if (playing) return;
      playing = true;
      loop = (async () => {
        while (playing) {
          while (!paused && seen < options.graph.requests.length) {
            const p = act(options.graph.requests[seen++]!).catch((err: unknown) => {
              failures.push(String(err));
            });
            inFlight.add(p);
            void p.finally(() => inFlight.delete(p));
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    async stop(stopOptions = {}) {
      playing = false;
      if (stopOptions.abandon) stopped = true;
      await loop;
      await Promise.all(inFlight);
    },
  };
}

/** Waits until every driven document reads `approved` in the read model. */
export async function waitAllApproved(
  db: Knex,
  documents: readonly DrivenDocument[],
  timeoutMs: number,
  driver?: Pick<LifecycleDriver, 'failures' | 'answers'>,
): Promise<void> {
  const ids = documents.map((d) => d.id);
  await eventually(async () => {
    const rows = await db('documents').whereIn('id', ids).select<{ status: string }[]>('status');
    return rows.length === ids.length && rows.every((r) => r.status === 'approved');
  }, timeoutMs).catch(async (err: unknown) => {
    const seen = driver
      ? `; the driver's failures: ${JSON.stringify(driver.failures)}, answers: ${JSON.stringify([...driver.answers])}`
      : '';
    throw new Error(`${(err as Error).message}; not approved: ${await whyNotApproved(db, ids)}${seen}`);
  });
}

/**
 * What a stuck document's read model says, for the failure message: its status and finalization, each approver's
 * state and notification, the action evidence submitted for it, and the events recorded, in order.
 */
async function whyNotApproved(db: Knex, ids: readonly string[]): Promise<string> {
  const stuck = await db('documents')
    .whereIn('id', ids)
    .whereNot({ status: 'approved' })
    .select<{ id: string; reference: string; status: string; finalization_state: string | null }[]>(
      'id',
      'reference',
      'status',
      'finalization_state',
      'finalization_error',
      'workflow_type',
    );
  const details = await Promise.all(
    stuck.map(async (d) => ({
      ...d,
      approvers: await db('approvers')
        .where({ document_id: d.id })
        .orderBy(['order_index', 'created_at'])
        .select('id', 'order_index', 'action_type', 'status', 'notification_status', 'acted_at'),
      evidence: await db('approver_action_evidence')
        .where({ document_id: d.id })
        .select('approver_id', 'kind', 'state', 'created_at'),
      events: (
        await db('document_events').where({ document_id: d.id }).orderBy('sequence').select('event')
      ).map((e: { event: string }) => e.event),
      messages: await db('whatsapp_messages')
        .where({ document_id: d.id })
        .orderBy('id')
        .select('approver_id', 'direction', 'kind', 'status', 'created_at'),
    })),
  );
  return JSON.stringify(details);
}

/** Each approver got exactly one approval request: counted per recipient and template at the fake Graph API. */
export function expectOneNotificationPerApprover(
  graph: FakeGraphApi,
  documents: readonly DrivenDocument[],
): void {
  const counts = new Map<string, number>();
  for (const r of graph.requests) {
    const to = (r.body as { to?: string } | undefined)?.to;
    const template = templateOf(r)?.name;
    if (!to || !template) continue;
    const key = `${to} ${template}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const duplicates = [...counts].filter(([, n]) => n > 1);
  expect(duplicates, 'recipients notified more than once').toEqual([]);
  const phones = documents.flatMap((d) => d.phones);
  const notified = new Set([...counts.keys()].map((k) => k.split(' ')[0]));
  expect(
    phones.filter((p) => !notified.has(p)),
    'approvers never notified',
  ).toEqual([]);
}

interface DeliveryBody {
  id: number;
  event: string;
  data: { document?: { id?: string }; approver?: { id?: string } };
}

/**
 * Waits until the receiver has the expected events of every document, then checks that no event arrived under two
 * delivery ids (an event is its name, its document and its approver), and that every delivery verified.
 */
export async function expectWebhooksOncePerEvent(
  receiver: WebhookReceiver,
  documents: readonly DrivenDocument[],
  timeoutMs: number,
): Promise<void> {
  const eventsOf = () => {
    const ids = new Map<string, Set<string>>();
    for (const r of receiver.requests) {
      const body = JSON.parse(r.rawBody.toString('utf8')) as DeliveryBody;
      const header = String(r.headers['x-wathiq-delivery']);
      expect(header, 'X-Wathiq-Delivery equals the body id').toBe(String(body.id));
      const key = `${body.event} ${body.data.document?.id ?? ''} ${body.data.approver?.id ?? ''}`;
      const set = ids.get(key) ?? new Set<string>();
      set.add(header);
      ids.set(key, set);
    }
    return ids;
  };
  const expected = documents.length * 2 + documents.reduce((n, d) => n + d.phones.length, 0);
  await eventually(() => eventsOf().size >= expected, timeoutMs).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}: ${eventsOf().size} of ${expected} events delivered`);
  });
  const ids = eventsOf();
  expect(ids.size).toBe(expected);
  const twice = [...ids]
    .filter(([, set]) => set.size > 1)
    .map(([key, set]) => `${key}: ${[...set].join(', ')}`);
  expect(twice, 'events delivered under more than one delivery id').toEqual([]);
  for (const d of documents) {
    expect(ids.has(`document.sent ${d.id} `), `document.sent of ${d.reference}`).toBe(true);
    expect(ids.has(`document.approved ${d.id} `), `document.approved of ${d.reference}`).toBe(true);
  }
  const unverified = receiver.requests.filter((r) => r.verification && !r.verification.ok);
  expect(unverified.length, 'deliveries failing signature verification').toBe(0);
}

/** The account's reference numbers are WQT-<year>-000001 … in order, none twice, none missing. */
export async function expectReferencesGapFree(db: Knex, accountId: string): Promise<void> {
  const rows = await db('documents')
    .where({ account_id: accountId })
    .select<{ reference: string }[]>('reference');
  const numbers = rows.map((r) => Number(/^WQT-\d{4}-(\d{6})$/.exec(r.reference)?.[1])).sort((a, b) => a - b);
  expect(numbers).toEqual(Array.from({ length: rows.length }, (_, i) => i + 1));
}

/** Downloads the signed PDF of a document through the API and has pdfsig check its signature against the CA. */
export async function expectSignedDownload(
  driver: LifecycleDriver,
  doc: DrivenDocument,
  dir: string,
  nssDir: string,
): Promise<void> {
  const res = await driver.request(`/documents/${doc.id}/download`);
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as { data: { download_url: string } };
  const file = await fetch(data.download_url);
  expect(file.status).toBe(200);
  const target = path.join(dir, `${doc.reference}.pdf`);
  await writeFile(target, Buffer.from(await file.arrayBuffer()));
  const { signatures, output } = pdfsig(target, nssDir);
  expect(signatures, output).toHaveLength(1);
  expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
}
