import { randomInt } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalWorkflowId, retryFinalizationUpdate } from '../../src/features/approval/definitions.ts';
import { readObject } from '../../src/storage/storage.ts';
import { webhookOutboxSweepWorkflowId } from '../../src/features/webhooks/definitions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  quickRepliesOf,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  TINY_PNG,
  type ApproverSpec,
  type CreatedDocument,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { historyText, needlesIn, type Needle } from '../helpers/histories.ts';
import { failWrites } from '../helpers/write-faults.ts';

/**
 * Temporal's histories hold ids and states only. Every path a document can take is driven
 * against the real service and Temporal — sequential and parallel, sign (drawn and typed), stamp (uploaded and
 * generated), approve and review by page and by WhatsApp button, a retried page submit, reject with a reason,
 * remind, void, expiry, WhatsApp failures whose messages name the number, a finalization that fails and is
 * retried, a write parked in attention — with an account webhook subscribed to every event. Then each approval
 * workflow's and each webhook delivery workflow's stored history is read back, payloads decoded, and searched for
 * the approvers' phone numbers (E.164 with and without "+", and the local form), their names, the typed name, the
 * rejection reason, the page's client IP address and user agent.
 */
const IP = '203.0.113.77'; // TEST-NET-3, sent as X-Forwarded-For (TRUST_PROXY=1 below)
const UA = 'PiiCanary/7.3 (Wathiq history probe; Zq9xK)';
const PAGE = { 'x-forwarded-for': IP, 'user-agent': UA };
const TYPED_NAME = 'Quillon Vexbridge';
const REASON = 'Rejected by Ysolde Marchetti-Oyelaran: clause 4';
const DELEGATION_REASON = 'Away at the Kettleburn audit; Zephrine decides';

const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
interface Person {
  name: string;
  phone: string;
}
const people: Person[] = [];
/** A distinctive approver: a Saudi or UK number no other test uses, and a name found nowhere else. */
function person(name: string, uk = false): Person {
  const p = { name, phone: uk ? `4479111${digits(5)}` : `96655${digits(7)}` };
  people.push(p);
  return p;
}
const spec = (p: Person, action_type: ApproverSpec['action_type'], order?: number): ApproverSpec => ({
  name: p.name,
  phone: p.phone,
  action_type,
  ...(order === undefined ? {} : { order }),
});

function needles(): Needle[] {
  const list: Needle[] = [
    { label: 'ip', value: IP },
    { label: 'user agent', value: UA },
    { label: 'user agent product', value: 'PiiCanary' },
    { label: 'typed name', value: TYPED_NAME },
    { label: 'rejection reason', value: 'Ysolde Marchetti' },
    { label: 'delegation reason', value: 'Kettleburn' },
  ];
  for (const p of people) {
    const national = p.phone.startsWith('966') ? p.phone.slice(3) : p.phone.slice(2);
    list.push(
      { label: 'name', value: p.name },
      { label: 'phone (E.164)', value: `+${p.phone}` },
      { label: 'phone (digits)', value: p.phone },
      { label: 'phone (local)', value: `0${national}` },
    );
  }
  return list;
}

let h: FlowHarness;
let receiver: WebhookReceiver;
let webhookId: string;
const documents: CreatedDocument[] = [];

beforeAll(async () => {
  h = await startFlowHarness({
    env: {
      TRUST_PROXY: '1',
      APPROVAL_WRITE_RETRY_SECONDS: '3',
      WEBHOOK_RETRY_SCALE: '0.001',
      PDF_MAX_CONCURRENT_INSPECTIONS: '8',
    },
  });
  receiver = await startWebhookReceiver();
  const res = await h.service.request('/webhooks', {
    method: 'POST',
    account: h.account,
    body: JSON.stringify({
      url: receiver.url,
      events: [
        'document.created',
        'document.sent',
        'approver.completed',
        'document.approved',
        'document.rejected',
        'document.voided',
        'document.expired',
        'document.finalization_failed',
      ],
    }),
  });
  const { data } = (await res.json()) as { data: { id: string; secret: string } };
  expect(res.status).toBe(201);
  receiver.setSecret(data.secret);
  webhookId = data.id;
}, 60_000);
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const db = () => h.service.database.db;
const client = () => h.service.temporal.client;
const handleOf = (documentId: string) => client().workflow.getHandle(approvalWorkflowId(documentId));

async function created(options: Parameters<typeof createDocument>[1]): Promise<CreatedDocument> {
  const doc = await createDocument(h, { title: 'History probe', ...options });
  documents.push(doc);
  return doc;
}
async function sent(doc: CreatedDocument): Promise<void> {
  const res = await send(h, doc.id);
  expect(res.status, await res.clone().text()).toBe(200);
}
const untilStatus = (doc: CreatedDocument, status: string) =>
  eventually(async () => (await statusOf(h, doc.id)).status === status, 60_000);
const approve = async (p: Person, doc: CreatedDocument) => {
  const request = await requestFor(h, p.phone, doc.id, 30_000);
  const res = await tapButton(h, { from: p.phone, payload: quickRepliesOf(request)[0]! });
  expect(res.status).toBe(200);
};
const onPage = async (p: Person, doc: CreatedDocument, action: 'complete' | 'reject', body: unknown) => {
  const request = await requestFor(h, p.phone, doc.id, 30_000);
  return pagePost(h, linkTokenOf(request), action, body, PAGE);
};
const completeOnPage = async (p: Person, doc: CreatedDocument, body: unknown = {}) => {
  const res = await onPage(p, doc, 'complete', body);
  expect(res.status, await res.clone().text()).toBe(200);
};

/** Sequential: drawn signature, uploaded stamp, approve by button, review on the page. */
async function sequentialAllFour(): Promise<void> {
  const [signer, stamper, approver, reviewer] = [
    person('سلسبيل الخزرجي'),
    person('Ottoline Brackwater', true),
    person('ثامر العنقري'),
    person('Perpetua Ravensholt'),
  ];
  const doc = await created({
    workflowType: 'sequential',
    approvers: [
      spec(signer, 'sign', 1),
      spec(stamper, 'stamp', 2),
      spec(approver, 'approve_only', 3),
      spec(reviewer, 'review_only', 4),
    ],
  });
  await sent(doc);
  await completeOnPage(signer, doc, { signature_png: TINY_PNG });
  await completeOnPage(stamper, doc, { stamp_png: TINY_PNG });
  await approve(approver, doc);
  await completeOnPage(reviewer, doc);
  await untilStatus(doc, 'approved');
}

/** Parallel: typed signature (submitted twice at once), generated seal, approve on the page, review by button. */
async function parallelAllFour(): Promise<void> {
  const [signer, stamper, approver, reviewer] = [
    person('Fenwick Oluwaseun-Drax'),
    person('رغد الشمّري'),
    person('Marisol Entwhistle', true),
    person('عبد الإله البقمي'),
  ];
  const doc = await created({
    workflowType: 'parallel',
    approvers: [
      spec(signer, 'sign'),
      spec(stamper, 'stamp'),
      spec(approver, 'approve_only'),
      spec(reviewer, 'review_only'),
    ],
  });
  await sent(doc);
  // The same submit twice (a double tap, a retry): one takes effect, the other hears it is too late.
  const twice = await Promise.all([
    onPage(signer, doc, 'complete', { typed_name: TYPED_NAME }),
    onPage(signer, doc, 'complete', { typed_name: TYPED_NAME }),
  ]);
  expect(twice.map((r) => r.status).sort()).toEqual([200, 410]);
  await completeOnPage(stamper, doc, { generated_seal: true });
  await completeOnPage(approver, doc);
  const request = await requestFor(h, reviewer.phone, doc.id, 30_000);
  expect((await tapButton(h, { from: reviewer.phone, payload: quickRepliesOf(request)[0]! })).status).toBe(
    200,
  );
  await untilStatus(doc, 'approved');
}

/** The first approver rejects on the page, giving a reason that names someone; the second is never asked. */
async function rejected(): Promise<void> {
  const [first, second] = [person('نجلاء الحربي'), person('Barnaby Quisenberry')];
  const doc = await created({
    workflowType: 'sequential',
    approvers: [spec(first, 'approve_only', 1), spec(second, 'sign', 2)],
  });
  await sent(doc);
  const res = await onPage(first, doc, 'reject', { reason: REASON });
  expect(res.status, await res.clone().text()).toBe(200);
  await untilStatus(doc, 'rejected');
}

/** Delegation: the approver hands their step to a delegate on the page, who approves by button. */
async function delegated(): Promise<void> {
  const [first, delegate] = [person('Isembard Quillfeather'), person('شهد المطيري', true)];
  const doc = await created({
    workflowType: 'sequential',
    approvers: [spec(first, 'approve_only', 1)],
    fields: { allow_delegation: 'true' },
  });
  await sent(doc);
  const request = await requestFor(h, first.phone, doc.id, 30_000);
  const res = await fetch(`${h.service.api.url}/a/${linkTokenOf(request)}/delegate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PAGE },
    body: JSON.stringify({ name: delegate.name, phone: `+${delegate.phone}`, reason: DELEGATION_REASON }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  await approve(delegate, doc);
  await untilStatus(doc, 'approved');
}

/** Expires on its durable timer with nobody having acted. */
async function expired(): Promise<void> {
  const p = person('Hildegard Nwachukwu-Bliss');
  const doc = await created({ workflowType: 'parallel', approvers: [spec(p, 'approve_only')] });
  await db()('documents')
    .where({ id: doc.id })
    .update({ expires_at: new Date(Date.now() + 4000) });
  await sent(doc);
  await requestFor(h, p.phone, doc.id, 30_000);
  await untilStatus(doc, 'expired');
}

/**
 * The signature image vanishes from storage before the last approval: finalization fails for good
 * (file_missing); the image is put back and the operator's retryFinalization update finishes the document.
 */
async function finalizationFailsThenRetried(): Promise<void> {
  const [signer, approver] = [person('ريم الدوسري'), person('Cornelius Vantongeren')];
  const doc = await created({
    workflowType: 'parallel',
    approvers: [spec(signer, 'sign'), spec(approver, 'approve_only')],
  });
  await sent(doc);
  await completeOnPage(signer, doc, { signature_png: TINY_PNG });
  const { signature_key: key } = await db()('approvers')
    .where({ id: doc.approvers[0]!.id })
    .first<{ signature_key: string }>();
  const storage = h.service.deps.storage;
  const image = (await readObject(storage, key))!;
  await storage.delete(key);
  await approve(approver, doc);
  await eventually(async () => {
    const res = await h.service.request(`/documents/${doc.id}`, { account: h.account });
    const { data } = (await res.json()) as { data: { finalization: { state: string } | null } };
    return data.finalization?.state === 'failed';
  }, 60_000);
  await storage.put(key, Readable.from([image]), { contentType: 'image/png' });
  await handleOf(doc.id).executeUpdate(retryFinalizationUpdate);
  await untilStatus(doc, 'approved');
}

/**
 * WhatsApp's answers name the approver's number (a retryable 500, then a permanent refusal): the notice is
 * recorded as failed, the approver is reminded, and the document is voided.
 */
async function whatsAppFailuresRemindVoid(): Promise<() => Promise<void>> {
  const p = person('Evander Thistlewood-Okafor');
  const doc = await created({ workflowType: 'sequential', approvers: [spec(p, 'approve_only')] });
  const national = p.phone.slice(3);
  h.graph.scriptFor(
    p.phone,
    {
      kind: 'graph_error',
      status: 500,
      code: 131000,
      message: `Something went wrong sending to +${p.phone} (${p.name})`,
    },
    {
      kind: 'graph_error',
      status: 400,
      code: 131026,
      message: `Message undeliverable: 0${national} (${p.name}) is not on WhatsApp`,
    },
  );
  await sent(doc);
  // The failed message is recorded before the workflow marks the approver notified (a separate write): a remind
  // is accepted once both are visible.
  await eventually(async () => {
    const approver = (await statusOf(h, doc.id)).approvers[0];
    return approver?.notification?.status === 'failed' && approver.status === 'notified';
  }, 60_000);
  return async () => {
    // As soon as the read model says notified the workflow may not have taken the result yet: 409 until it has.
    const reminded = await eventually(async () => {
      const res = await h.service.request(`/approvers/${doc.approvers[0]!.id}/remind`, {
        method: 'POST',
        account: h.account,
      });
      return res.status === 409 ? false : res;
    }, 60_000);
    expect(reminded.status, await reminded.clone().text()).toBe(200);
    const voided = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(voided.status, await voided.clone().text()).toBe(200);
    await untilStatus(doc, 'voided');
  };
}

/**
 * The action's write refused by PostgreSQL: the approver is answered with an error and nothing is recorded (the
 * action is written in the answer's transaction); asked again once the write goes through, it is taken.
 */
async function refusedThenTakenAgain(): Promise<void> {
  const p = person('Wilhelmina Achterberg');
  const doc = await created({ workflowType: 'parallel', approvers: [spec(p, 'approve_only')] });
  await sent(doc);
  const request = await requestFor(h, p.phone, doc.id, 30_000);
  const fault = await failWrites(db(), 'approverCompleted');
  try {
    expect((await pagePost(h, linkTokenOf(request), 'complete', {}, PAGE)).status).toBe(500);
    expect((await statusOf(h, doc.id)).approvers.map((a) => a.status)).toEqual(['notified']);
  } finally {
    await fault.remove();
  }
  expect((await pagePost(h, linkTokenOf(request), 'complete', {}, PAGE)).status).toBe(200);
  await untilStatus(doc, 'approved');
}

describe('Temporal histories hold no personal data', () => {
  it('drives every path, then finds no phone number, name, IP address or user agent in any history', async () => {
    // First and alone: the fake Graph API's scripted answers go to the next requests, whoever they are for.
    const finishVoid = await whatsAppFailuresRemindVoid();
    await Promise.all([
      finishVoid(),
      sequentialAllFour(),
      parallelAllFour(),
      rejected(),
      expired(),
      finalizationFailsThenRetried(),
      delegated(),
    ]);
    // Last and alone: the injected fault refuses every approver's completion in this database.
    await refusedThenTakenAgain();

    // The page's evidence reached the read model (the certificate and the status read it there).
    const pageActs = await db()('approvers')
      .whereIn(
        'document_id',
        documents.map((d) => d.id),
      )
      .where({ action_channel: 'page' })
      .select<{ action_ip: string; action_user_agent: string }[]>('action_ip', 'action_user_agent');
    expect(pageActs.length).toBeGreaterThanOrEqual(8);
    for (const a of pageActs) expect(a).toEqual({ action_ip: IP, action_user_agent: UA });

    // Every approval workflow has finished; every webhook delivery has settled.
    for (const doc of documents) await handleOf(doc.id).result();
    const deliveries = await eventually(async () => {
      const rows = await db()('webhook_deliveries')
        .where({ webhook_id: webhookId })
        .select<{ id: number; status: string }[]>('id', 'status');
      return rows.length >= documents.length * 3 && rows.every((r) => r.status !== 'pending') && rows;
    }, 60_000);

    const workflowIds = [
      ...documents.map((d) => approvalWorkflowId(d.id)),
      ...deliveries.map((d) => `webhook-${webhookId}-delivery-${d.id}-from-1`),
      webhookOutboxSweepWorkflowId(h.service.taskQueue),
    ];
    const found: string[] = [];
    const texts = new Map<string, string>();
    for (const workflowId of workflowIds) {
      const text = await historyText(client(), workflowId);
      texts.set(workflowId, text);
      // The search reads decoded payloads: the approval histories name their approvers' ids only there.
      const doc = documents.find((d) => workflowId === approvalWorkflowId(d.id));
      for (const a of doc?.approvers ?? []) expect(text).toContain(a.id);
      for (const hit of needlesIn(text, needles())) found.push(`${workflowId} holds ${hit}`);
    }
    expect(found).toEqual([]);

    // Each action taken has exactly one evidence row, accepted, named by its id in the history; the refused
    // double submit left none behind.
    const ids = documents.map((d) => d.id);
    const evidence = await db()('approver_action_evidence')
      .whereIn('document_id', ids)
      .select<{ id: string; document_id: string; approver_id: string; state: string }[]>(
        'id',
        'document_id',
        'approver_id',
        'state',
      );
    const acted = await db()('approvers')
      .whereIn('document_id', ids)
      .whereIn('status', ['completed', 'rejected'])
      .pluck<string[]>('id');
    expect(evidence.filter((e) => e.state !== 'accepted')).toEqual([]);
    expect(evidence.map((e) => e.approver_id).sort()).toEqual([...acted].sort());
    for (const e of evidence) expect(texts.get(approvalWorkflowId(e.document_id))).toContain(e.id);
  }, 240_000);
});
