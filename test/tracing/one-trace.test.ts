import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { readFile } from 'node:fs/promises';
import { replayHistories } from '../helpers/histories.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approvalWorkflowId } from '../../src/features/approval/definitions.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Tracing as a deployment with OTEL_EXPORTER_OTLP_ENDPOINT runs it (src/runtime/tracing.ts, the Koa middleware,
 * the Temporal interceptors, the outbound spans), with the spans kept in memory instead of posted to the endpoint.
 */
const exporter = new InMemorySpanExporter();
let h: FlowHarness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startFlowHarness({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
    traceTo: exporter,
  });
}, 180_000);
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const WHATSAPP_SPAN = 'POST /{phone_number_id}/messages';

describe('one send, one trace', () => {
  it('runs from the API request through StartWorkflow and the workflow to each activity and its outbound call', async () => {
    const hook = await h.service.request('/webhooks', {
      method: 'POST',
      account: h.account,
      body: JSON.stringify({ url: receiver.url, events: ['document.sent'] }),
    });
    expect(hook.status).toBe(201);
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Sara', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id, 60_000));
    await receiver.waitForRequests(1, 60_000);
    // The approval page, whose path carries the approver's token.
    expect((await fetch(`${h.service.api.url}/a/${token}`)).status).toBe(200);
    // Voiding ends the workflow, and with it its RunWorkflow span, which the worker exports when it ends.
    const voided = await h.service.request(`/documents/${doc.id}/void`, {
      method: 'POST',
      account: h.account,
    });
    expect(voided.status).toBe(200);

    const workflowId = approvalWorkflowId(doc.id);
    const found = await eventually(async () => {
      await h.service.tracing!.forceFlush();
      const spans = exporter.getFinishedSpans();
      const server = spans.find((s) => s.name === 'POST /api/v1/documents/:id/send');
      if (!server) return undefined;
      const trace = spans.filter((s) => s.spanContext().traceId === server.spanContext().traceId);
      const names = new Set(trace.map((s) => s.name));
      const complete = [
        'RunWorkflow:documentApproval',
        'RunActivity:beginApproval',
        'RunActivity:notifyApprover',
        WHATSAPP_SPAN,
        'RunWorkflow:webhookDeliveryRoundWorkflow',
        'POST webhook',
      ].every((n) => names.has(n));
      return complete && { server, trace, spans };
    }, 90_000);
    const { server, trace, spans } = found;
    const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    const one = (name: string, filter: (s: ReadableSpan) => boolean = () => true) => {
      const matching = trace.filter((s) => s.name === name && filter(s));
      expect(matching, name).toHaveLength(1);
      return matching[0]!;
    };

    // The API's server span, named by its route template, opens the trace.
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.parentSpanId).toBeUndefined();
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/v1/documents/:id/send',
      'http.response.status_code': 200,
    });
    expect(server.resource.attributes['service.name']).toBe('wathiq');

    // StartWorkflow inside the request, the workflow run under it.
    const start = one('StartWorkflow:documentApproval');
    expect(parentOf(start)).toBe(server);
    expect(start.attributes.temporalWorkflowId).toBe(workflowId);
    const run = one('RunWorkflow:documentApproval');
    expect(parentOf(run)).toBe(start);

    // Each activity that sends WhatsApp messages under the workflow (through its StartActivity span), and under it
    // the WhatsApp call: the approval request from beginApproval (the local activity that also records the send,
    // approval-lean-v5), the voided notice from notifyApprover.
    const notifies = trace.filter(
      (s) =>
        /^RunActivity:(beginApproval|notifyApprover)$/.test(s.name) &&
        s.attributes.temporalWorkflowId === workflowId,
    );
    expect(notifies.map((s) => s.name).sort()).toEqual([
      'RunActivity:beginApproval',
      'RunActivity:notifyApprover',
    ]);
    for (const notify of notifies) {
      expect(parentOf(notify)?.name).toBe(notify.name.replace('RunActivity', 'StartActivity'));
      expect(parentOf(parentOf(notify)!)).toBe(run);
    }
    const whatsapp = trace.filter((s) => s.name === WHATSAPP_SPAN);
    expect(whatsapp.length).toBeGreaterThanOrEqual(1);
    for (const call of whatsapp) {
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(notifies).toContain(parentOf(call));
      expect(call.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
      });
    }

    // The document.sent webhook: an activity of the approval workflow started its delivery round (the worker's
    // own client carries the trace), whose activity made the POST.
    const hookCall = one('POST webhook');
    expect(hookCall.kind).toBe(SpanKind.CLIENT);
    expect(hookCall.attributes).toMatchObject({
      'wathiq.webhook.event': 'document.sent',
      'http.response.status_code': 200,
    });
    const chain: string[] = [];
    for (let s = parentOf(hookCall); s; s = parentOf(s)) chain.push(s.name);
    expect(chain[0]).toMatch(/^RunActivity:/);
    expect(chain).toContain('RunWorkflow:webhookDeliveryRoundWorkflow');
    expect(chain).toContain('StartWorkflow:webhookDeliveryRoundWorkflow');
    expect(chain.slice(-3)).toEqual([
      'RunWorkflow:documentApproval',
      'StartWorkflow:documentApproval',
      'POST /api/v1/documents/:id/send',
    ]);

    // Every span of the trace is reachable from the server span: nothing dangles from a parent of another trace.
    for (const s of trace) {
      let root = s;
      while (parentOf(root)) root = parentOf(root)!;
      expect(root, s.name).toBe(server);
    }

    // The page request is its own trace, named by its template: the token is in no span's name or attribute.
    const page = spans.find((s) => s.name === 'GET /a/:token');
    expect(page?.attributes['http.route']).toBe('/a/:token');
    for (const s of spans) {
      expect(JSON.stringify([s.name, s.attributes])).not.toContain(token);
    }

    // Switching tracing off: the traced run replays through the bundle of a worker without tracing.
    const history = await h.service.temporal.client.workflow.getHandle(workflowId).fetchHistory();
    const [replayed] = await replayHistories(workflowsPath(), [{ workflowId, history }], {
      bundle: { code: await readFile(inject('workflowBundlePath'), 'utf8') },
    });
    expect(replayed?.error).toBeUndefined();
  }, 180_000);
});
