import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { replayHistories } from '../helpers/histories.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approvalWorkflowId, retryFinalizationUpdate } from '../../src/features/approval/definitions.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  TINY_PNG,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Tracing is a config change an operator makes at any time, with approvals in flight: a workflow that ran with
 * tracing on must go on without it, and the other way round. Two services run the same paths at once, one
 * traced and one not (every page action and button tap is an update; the reminder, void and the operator's
 * finalization retry too; the webhook queue takes signals), and each one's histories are then replayed through
 * the other's workflow bundle.
 */
const ENV = { REMIND_COOLDOWN_MINUTES: '0', APPROVAL_NOTIFY_RETRY_SECONDS: '3' };
const LONG = 90_000;
const TRACE_HEADER = '_tracer-data';
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

let traced: FlowHarness;
let untraced: FlowHarness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  [traced, untraced] = await Promise.all([
    startFlowHarness({
      env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      traceTo: new InMemorySpanExporter(),
    }),
    startFlowHarness({ env: ENV }),
  ]);
}, 180_000);
afterAll(async () => {
  await traced?.close();
  await untraced?.close();
  await receiver?.close();
});

/** The stored original no longer matches its hash: finalization fails for good. Returns the undo. */
async function tamperOriginal(h: FlowHarness, documentId: string): Promise<() => Promise<void>> {
  const storage = h.service.deps.storage;
  const { file_key } = await h.service.database
    .db('documents')
    .where({ id: documentId })
    .first<{ file_key: string }>('file_key');
  const original = Buffer.concat(await (await storage.get(file_key))!.toArray());
  await storage.put(file_key, Readable.from([Buffer.from('%PDF-1.7\nnot the upload\n')]));
  return async () => {
    await storage.put(file_key, Readable.from([original]));
  };
}

const until = (h: FlowHarness, documentId: string, status: string) =>
  eventually(async () => (await statusOf(h, documentId)).status === status, LONG);

const tap = async (h: FlowHarness, phone: string, documentId: string, button: 0 | 1) => {
  const request = await requestFor(h, phone, documentId, LONG);
  expect((await tapButton(h, { from: phone, payload: quickRepliesOf(request)[button]! })).status).toBe(200);
};

const creating = new Map<FlowHarness, Promise<unknown>>();
/** One upload at a time per service (the upload check answers 503 when its threads are busy); the rest in parallel. */
function create(h: FlowHarness, spec: Parameters<typeof createDocument>[1]) {
  const created = (creating.get(h) ?? Promise.resolve()).then(() => createDocument(h, spec));
  creating.set(
    h,
    created.catch(() => undefined),
  );
  return created;
}

/** Every path that reaches the workflow by update or signal; each returns its document's id once it ended. */
const PATHS: Record<string, (h: FlowHarness) => Promise<string>> = {
  async 'sequential, page and button, approved'(h) {
    const doc = await create(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Signer', phone: PHONES.saudiA, action_type: 'sign' },
        { name: 'Approver', phone: PHONES.saudiB, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const signer = await requestFor(h, PHONES.saudiA, doc.id, LONG);
    expect((await pagePost(h, linkTokenOf(signer), 'complete', { signature_png: TINY_PNG })).status).toBe(
      200,
    );
    await tap(h, PHONES.saudiB, doc.id, 0);
    await until(h, doc.id, 'approved');
    return doc.id;
  },
  async 'parallel, reminded, page and button, approved'(h) {
    const doc = await create(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'A', phone: PHONES.saudiC, action_type: 'approve_only' },
        { name: 'B', phone: PHONES.uk, action_type: 'sign' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const b = await requestFor(h, PHONES.uk, doc.id, LONG);
    await requestFor(h, PHONES.saudiC, doc.id, LONG);
    await eventually(async () => (await statusOf(h, doc.id)).approvers.every((x) => x.status === 'notified'));
    // The read model says notified a moment before the workflow has taken the notification's result; until then
    // the workflow refuses the reminder with 409 "not notified yet".
    const reminded = await eventually(async () => {
      const res = await h.service.request(`/approvers/${doc.approvers[0]!.id}/remind`, {
        method: 'POST',
        account: h.account,
      });
      return res.status === 409 ? false : res;
    }, LONG);
    expect(reminded.status, await reminded.text()).toBe(200);
    expect((await pagePost(h, linkTokenOf(b), 'complete', { typed_name: 'B' })).status).toBe(200);
    await tap(h, PHONES.saudiC, doc.id, 0);
    await until(h, doc.id, 'approved');
    return doc.id;
  },
  async rejected(h) {
    const doc = await create(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'A', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    await tap(h, PHONES.saudiA, doc.id, 1);
    await until(h, doc.id, 'rejected');
    return doc.id;
  },
  async voided(h) {
    const doc = await create(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiB, action_type: 'approve_only' }],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    await requestFor(h, PHONES.saudiB, doc.id, LONG);
    const res = await h.service.request(`/documents/${doc.id}/void`, { method: 'POST', account: h.account });
    expect(res.status).toBe(200);
    await until(h, doc.id, 'voided');
    return doc.id;
  },
  async 'finalization fails, the operator retries, approved'(h) {
    const doc = await create(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'A', phone: PHONES.saudiC, action_type: 'approve_only' }],
    });
    const restore = await tamperOriginal(h, doc.id);
    try {
      expect((await send(h, doc.id)).status).toBe(200);
      await tap(h, PHONES.saudiC, doc.id, 0);
      await eventually(async () => {
        const res = await h.service.request(`/documents/${doc.id}`, { account: h.account });
        const body = (await res.json()) as { data: { finalization: { state: string } | null } };
        return body.data.finalization?.state === 'failed';
      }, LONG);
    } finally {
      await restore();
    }
    await h.service.temporal.client.workflow
      .getHandle(approvalWorkflowId(doc.id))
      .executeUpdate(retryFinalizationUpdate);
    await until(h, doc.id, 'approved');
    return doc.id;
  },
};

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** Every workflow of the service's task queue (approvals, the webhook queue and its rounds), with its history. */
async function historiesOf(h: FlowHarness): Promise<{ workflowId: string; history: History }[]> {
  const client = h.service.temporal.client;
  const out: { workflowId: string; history: History }[] = [];
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${h.service.taskQueue}'` })) {
    out.push({
      workflowId: wf.workflowId,
      history: await client.workflow.getHandle(wf.workflowId).fetchHistory(),
    });
  }
  return out;
}

/** Whether any command of the history carried the trace header (activities, local activities, signals). */
const carriesTrace = (history: History) => JSON.stringify(history.events ?? []).includes(TRACE_HEADER);

async function replay(histories: { workflowId: string; history: History }[], bundle: { code: string }) {
  const results = await replayHistories(workflowsPath(), histories, {
    bundle,
    ...(traced.service.tracing && { sinks: traced.service.tracing.worker.sinks }),
  });
  return results.flatMap((r) =>
    r.error
      ? [
          `${r.workflowId}: ${(r.error instanceof Error ? r.error.message : JSON.stringify(r.error)).slice(0, 600)}`,
        ]
      : [],
  );
}

describe('switching tracing on or off with approvals in flight', () => {
  it('replays the traced runs of every path without tracing, and the untraced runs with it', async () => {
    for (const h of [traced, untraced]) {
      const hook = await h.service.request('/webhooks', {
        method: 'POST',
        account: h.account,
        body: JSON.stringify({ url: receiver.url, events: ['document.sent', 'document.approved'] }),
      });
      expect(hook.status).toBe(201);
    }
    // Both services, every path, at once.
    const runs = await Promise.all(
      [traced, untraced].flatMap((h) => Object.values(PATHS).map((path) => path(h))),
    );
    expect(runs).toHaveLength(2 * Object.keys(PATHS).length);

    const [tracedRuns, untracedRuns] = await Promise.all([historiesOf(traced), historiesOf(untraced)]);
    const approvals = (runs: { workflowId: string }[]) =>
      runs.filter((r) => r.workflowId.startsWith('document-')).length;
    expect(approvals(tracedRuns)).toBe(Object.keys(PATHS).length);
    expect(approvals(untracedRuns)).toBe(Object.keys(PATHS).length);
    // The webhook queue (signals) and its delivery rounds ran on both.
    expect(tracedRuns.length).toBeGreaterThan(Object.keys(PATHS).length);
    expect(untracedRuns.length).toBeGreaterThan(Object.keys(PATHS).length);
    // The traced runs really were traced (their commands carry the trace), the others not.
    for (const r of tracedRuns) expect(carriesTrace(r.history), r.workflowId).toBe(true);
    for (const r of untracedRuns) expect(carriesTrace(r.history), r.workflowId).toBe(false);

    const untracedBundle = { code: await readFile(inject('workflowBundlePath'), 'utf8') };
    const tracedBundle = await bundleWorkflowCode({
      workflowsPath: workflowsPath(),
      workflowInterceptorModules: traced.service.tracing!.workflowInterceptorModules,
      logger: silent,
    });
    expect(await replay(tracedRuns, untracedBundle)).toEqual([]); // tracing switched off
    expect(await replay(untracedRuns, tracedBundle)).toEqual([]); // tracing switched on
    expect(await replay(tracedRuns, tracedBundle)).toEqual([]);
  }, 300_000);
});
