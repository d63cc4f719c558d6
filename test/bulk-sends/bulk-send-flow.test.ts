import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { eventually, startFlowHarness, type FlowHarness } from '../helpers/approval-flow.ts';
import { createTemplate, type TemplateJson } from '../templates/support.ts';
import { created, rowsFor, postRows, type BulkSendJson } from './support.ts';

/**
 * Bulk sends end to end on a real worker against the fake Graph API: pages and continue-as-new, one message per
 * recipient, the tier's share pausing and resuming (a 24-hour window scaled to seconds), cancel, and Meta's
 * rate-limit answers slowing the pace instead of failing rows.
 */
let h: FlowHarness;
let template: TemplateJson;
let receiver: WebhookReceiver;

const TIER = 24; // unique recipients a "day"; bulk sends may take half: 12, i.e. 12 rows (one employee each)
// The rolling 24 hours, scaled: long enough for 12 rows to be sent within it on a loaded machine.
const WINDOW_MS = 12_000;
beforeAll(async () => {
  h = await startFlowHarness({
    env: {
      BULK_SEND_PAGE_SIZE: '4',
      BULK_SEND_PAGES_PER_RUN: '2',
      BULK_SEND_CONCURRENCY: '2',
      WHATSAPP_TIER_RECIPIENTS_PER_DAY: String(TIER),
      WHATSAPP_THROUGHPUT_MPS: '100',
      BULK_SEND_TIME_SCALE: String(WINDOW_MS / 86_400_000),
    },
  });
  template = await createTemplate(h.service, h.account);
  receiver = await startWebhookReceiver();
  const hook = await h.service.request('/webhooks', {
    method: 'POST',
    account: h.account,
    body: JSON.stringify({ url: receiver.url, events: ['bulk_send.completed', 'bulk_send.cancelled'] }),
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const get = async (id: string) =>
  (
    (await (await h.service.request(`/bulk-sends/${id}`, { account: h.account })).json()) as {
      data: BulkSendJson;
    }
  ).data;

/** The deliveries of `event` the receiver got, their bodies parsed. */
const deliveries = (event: string) =>
  receiver.requests
    .filter((r) => r.headers['x-wathiq-event'] === event)
    .map((r) => JSON.parse(r.rawBody.toString()) as { data: { bulk_send: { id: string } } });

const employeeMessages = (phones: string[]) =>
  h.graph.requests.filter((r) => phones.includes((r.body as { to?: string } | undefined)?.to ?? ''));

describe('a bulk send', () => {
  it('sends every row once, pausing while the tier share is spent, and completes', async () => {
    const base = 100_000 + Math.floor(Math.random() * 1000) * 100;
    const rows = rowsFor(18, base);
    const bulk = await created(await postRows(h.service, h.account, template.id, { rows }));
    expect(bulk.status).toBe('queued');

    // 12 rows fit the share; the 13th waits for the window to free up.
    const paused = await eventually(async () => {
      const b = await get(bulk.id);
      return b.status === 'paused_for_quota' ? b : undefined;
    }, 60_000);
    expect(paused.counts.sent).toBe(12);
    expect(Date.parse(paused.resumes_at!)).toBeGreaterThan(Date.now() - 1000);

    const done = await eventually(async () => {
      const b = await get(bulk.id);
      return b.status === 'completed' ? b : undefined;
    }, 90_000);
    expect(done.counts).toMatchObject({ rows: 18, created: 18, sent: 18, failed: 0 });

    // Each employee (sequential: only the first position is notified at send) got exactly one message.
    const employees = rows.map((r) => r.employee.phone);
    await eventually(() => employeeMessages(employees).length >= 18, 60_000);
    const counts = new Map<string, number>();
    for (const r of employeeMessages(employees)) {
      const to = (r.body as { to: string }).to;
      counts.set(to, (counts.get(to) ?? 0) + 1);
    }
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(18);

    // Each row has its document, made from the template, under the row's key.
    const docs = await h.service.database
      .db('bulk_send_rows as r')
      .join('documents as d', 'd.id', 'r.document_id')
      .where('r.bulk_send_id', bulk.id)
      .select('d.template_id', 'd.status');
    expect(docs).toHaveLength(18);
    expect(new Set(docs.map((d: { template_id: string }) => d.template_id))).toEqual(new Set([template.id]));

    // Pages of 4, two pages a run: the workflow continued as new several times.
    const runs = [];
    for await (const w of h.service.temporal.client.workflow.list({
      query: `WorkflowId = 'bulk-send-${bulk.id}'`,
    }))
      runs.push(w);
    expect(runs.length).toBeGreaterThan(2);

    const event = await eventually(
      () => deliveries('bulk_send.completed').find((d) => d.data.bulk_send.id === bulk.id),
      60_000,
    );
    expect(event.data.bulk_send).toMatchObject({ status: 'completed', counts: { sent: 18 } });
  }, 240_000);

  it('cancel stops the rest: rows not sent are not sent, the sent ones go on', async () => {
    const base = 300_000 + Math.floor(Math.random() * 1000) * 100;
    // Wait for an empty window, then fill the share so the bulk send pauses after 12.
    await new Promise((r) => setTimeout(r, WINDOW_MS + 500));
    const bulk = await created(
      await postRows(h.service, h.account, template.id, { rows: rowsFor(16, base) }),
    );
    await eventually(async () => (await get(bulk.id)).status === 'paused_for_quota', 60_000);
    const res = await h.service.request(`/bulk-sends/${bulk.id}/cancel`, {
      method: 'POST',
      account: h.account,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const cancelled = ((await res.json()) as { data: BulkSendJson }).data;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.counts).toMatchObject({ sent: 12, cancelled: 4 });
    const again = await h.service.request(`/bulk-sends/${bulk.id}/cancel`, {
      method: 'POST',
      account: h.account,
    });
    expect(again.status).toBe(409);
    // The workflow ends (woken by the signal) and sends nothing more, even after the window frees up.
    await h.service.temporal.client.workflow.getHandle(`bulk-send-${bulk.id}`).result();
    await new Promise((r) => setTimeout(r, WINDOW_MS + 1_000));
    expect((await get(bulk.id)).counts).toMatchObject({ sent: 12, cancelled: 4 });
    await eventually(
      () => deliveries('bulk_send.cancelled').find((d) => d.data.bulk_send.id === bulk.id),
      60_000,
    );
  }, 120_000);

  it("slows down on Meta's rate-limit answers instead of failing rows", async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS + 500));
    const base = 500_000 + Math.floor(Math.random() * 1000) * 100;
    // 14 rows: the share takes 12 and the last two wait for the window, so the page that resumes them checks the
    // pace well after the first employees' notifications were refused, however slow the machine.
    const rows = rowsFor(14, base);
    const codes = [130429, 131056, 131048];
    codes.forEach((code, i) =>
      h.graph.scriptFor(rows[i]!.employee.phone, { kind: 'graph_error', status: 400, code }),
    );
    const bulk = await created(await postRows(h.service, h.account, template.id, { rows }));
    await eventually(async () => (await get(bulk.id)).status === 'paused_for_quota', 60_000);
    const done = await eventually(async () => {
      const b = await get(bulk.id);
      return b.status === 'completed' ? b : undefined;
    }, 90_000);
    expect(done.counts).toMatchObject({ sent: 14, failed: 0 });
    const factor = await h.service.database
      .db('whatsapp_bulk_pacing')
      .where({ sender: h.graph.phoneNumberId })
      .first<{ rate_factor: number }>('rate_factor');
    expect(factor.rate_factor).toBeLessThan(1);
    // Every employee still got their message: the refused ones were retried by their approval workflows, and
    // the refusals stay marked on them.
    const employees = rows.map((r) => r.employee.phone);
    await eventually(
      () =>
        new Set(
          employeeMessages(employees)
            .filter((r) => r.wamid)
            .map((r) => (r.body as { to: string }).to),
        ).size === 14,
      90_000,
    );
    const marked = await h.service.database
      .db('whatsapp_messages')
      .whereIn(
        'phone',
        rows.slice(0, 3).map((r) => r.employee.phone),
      )
      .whereNotNull('rate_limited_at')
      .whereNotNull('wamid')
      .count<{ n: string }[]>('* as n');
    expect(Number(marked[0]!.n)).toBe(3);
  }, 180_000);
});
