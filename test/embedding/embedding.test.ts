import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import {
  createDocument,
  eventually,
  messagesTo,
  pagePost,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Issue 15 items 6 and 7 end to end: an approver with notify: false gets nothing from the fake Graph API, the
 * account's app gets their link, the page may be framed by the account's origins only, and the lifecycle events
 * arrive at a real webhook receiver.
 */

const freshPhone = () => `9665${randomInt(10_000_000, 99_999_999)}`;

interface Delivery {
  event: string;
  sequence: number;
  data: {
    document: { id: string };
    approver?: { id: string; status: string; rejection_reason: string | null };
  };
}

let h: FlowHarness;
let receiver: WebhookReceiver;

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await h.service.request(path, {
    method: init.method ?? 'GET',
    account: h.account,
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data?: Record<string, unknown>; error?: { details?: unknown } },
  };
};

const deliveries = (documentId: string): Delivery[] =>
  receiver.requests
    .map((r) => JSON.parse(r.rawBody.toString('utf8')) as Delivery)
    .filter((d) => d.data.document.id === documentId);

const csp = (res: Response) => res.headers.get('content-security-policy') ?? '';

beforeAll(async () => {
  h = await startFlowHarness();
  receiver = await startWebhookReceiver();
  const hook = await api('/webhooks', {
    method: 'POST',
    body: {
      url: receiver.url,
      events: [
        'approver.notified',
        'approver.viewed',
        'approver.rejected',
        'approver.completed',
        'document.rejected',
        'document.voided',
      ],
    },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  receiver.setSecret((hook.body.data as { secret: string }).secret);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

describe('embedding', () => {
  it('sends nothing to a notify: false approver, hands out their link, and frames the page only for the account origins', async () => {
    const [embedded, messaged] = [freshPhone(), freshPhone()];
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Embedded', phone: embedded, action_type: 'approve_only' },
        { name: 'Messaged', phone: messaged, action_type: 'approve_only' },
      ],
    });
    const [a, b] = doc.approvers;
    const draftLink = await api(`/approvers/${a!.id}/link`);
    expect(draftLink.status).toBe(409);

    const updated = await api(`/approvers/${a!.id}`, { method: 'PUT', body: { notify: false } });
    expect(updated.status).toBe(200);
    expect(updated.body.data!.notify).toBe(false);
    expect((await api(`/approvers/${a!.id}`, { method: 'PUT', body: { notify: 'no' } })).status).toBe(422);

    expect((await send(h, doc.id)).status).toBe(200);
    // Their turn came: notified, nothing sent (notification status skipped).
    const status = await eventually(async () => {
      const s = await statusOf(h, doc.id);
      return s.approvers[0]!.status === 'notified' ? s : undefined;
    }, 60_000);
    expect(status.approvers[0]!.notification?.status).toBe('skipped');
    expect(status.current_approver_ids).toEqual([a!.id]);
    const remind = await api(`/approvers/${a!.id}/remind`, { method: 'POST' });
    expect(remind.status).toBe(409);

    const link = await api(`/approvers/${a!.id}/link`);
    expect(link.status).toBe(200);
    const linkUrl = link.body.data!.url as string;
    expect(linkUrl).toMatch(/\/a\/[A-Za-z0-9_-]+$/);
    // PUBLIC_BASE_URL of the test service is not its port: the page is fetched at the service's own address.
    const url = `${h.service.api.url}${new URL(linkUrl).pathname}`;
    expect(link.body.data!.usable_now).toBe(true);
    const later = await api(`/approvers/${b!.id}/link`);
    expect(later.body.data!.usable_now).toBe(false);
    // Someone else's approver is not found.
    const stranger = await h.service.createAccount({ plan: 'enterprise' });
    const foreign = await h.service.request(`/approvers/${a!.id}/link`, { account: stranger });
    expect(foreign.status).toBe(404);

    // The page: not framable until the account names origins.
    const closed = await fetch(url);
    expect(closed.status).toBe(200);
    expect(csp(closed)).toContain("frame-ancestors 'none'");
    expect(closed.headers.get('x-frame-options')).toBe('DENY');

    const hostile = [
      'http://app.example.com',
      'https://app.example.com/path',
      "https://app.example.com; script-src 'unsafe-inline'",
      'https://*',
      '*',
      'https://*.com',
      'https://user@app.example.com',
      'https://app.example.com:99999',
      'https://10.0.0.1',
      "'self'",
    ];
    for (const origin of hostile) {
      const refused = await api('/account/settings', { method: 'PUT', body: { embed_origins: [origin] } });
      expect(refused.status, origin).toBe(422);
      expect(refused.body.error?.details, origin).toHaveProperty(['embed_origins.0']);
    }
    const tooMany = Array.from({ length: 11 }, (_, i) => `https://app${i}.example.com`);
    expect((await api('/account/settings', { method: 'PUT', body: { embed_origins: tooMany } })).status).toBe(
      422,
    );
    const set = await api('/account/settings', {
      method: 'PUT',
      body: { embed_origins: ['https://App.Example.com:443', 'https://*.partner.example.org:8443'] },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data!.embed_origins).toEqual([
      'https://app.example.com',
      'https://*.partner.example.org:8443',
    ]);
    expect((await api('/account/settings')).body.data!.embed_origins).toEqual(set.body.data!.embed_origins);

    const framed = await fetch(url);
    expect(csp(framed)).toContain(
      'frame-ancestors https://app.example.com https://*.partner.example.org:8443;',
    );
    expect(framed.headers.get('x-frame-options')).toBeNull();

    // The link works: the approver acts from it, then the next one is messaged as usual.
    const token = url.slice(url.lastIndexOf('/') + 1);
    expect((await pagePost(h, token, 'complete', {})).status).toBe(200);
    await requestFor(h, messaged, doc.id, 60_000);
    expect(messagesTo(h, embedded)).toEqual([]);

    // The second approver rejects from their page. Their message goes out before they are recorded as notified
    // (the send, then the write), so the link turns usable a moment after the message arrives.
    const bLink = await eventually(async () => {
      const data = (await api(`/approvers/${b!.id}/link`)).body.data!;
      return data.usable_now === true ? data : undefined;
    }, 30_000);
    const bToken = (bLink.url as string).split('/').at(-1)!;
    expect((await pagePost(h, bToken, 'reject', { reason: 'wrong price' })).status).toBe(200);

    // The events: notified for both, viewed once for the one who opened the page twice, rejected, then the
    // document's rejection.
    const events = await eventually(() => {
      const got = deliveries(doc.id);
      return got.some((d) => d.event === 'document.rejected') &&
        got.filter((d) => d.event === 'approver.notified').length === 2
        ? got
        : undefined;
    }, 60_000);
    expect(receiver.requests.every((r) => r.verification?.ok !== false)).toBe(true);
    const of = (event: string) => events.filter((d) => d.event === event);
    expect(
      of('approver.notified')
        .map((d) => d.data.approver!.id)
        .sort(),
    ).toEqual([a!.id, b!.id].sort());
    expect(of('approver.viewed').map((d) => d.data.approver!.id)).toEqual([a!.id]);
    expect(of('approver.completed').map((d) => d.data.approver!.id)).toEqual([a!.id]);
    const rejected = of('approver.rejected');
    expect(rejected.map((d) => d.data.approver!.id)).toEqual([b!.id]);
    expect(rejected[0]!.data.approver!.rejection_reason).toBe('wrong price');
    expect(of('document.rejected')).toHaveLength(1);
    // Deliveries may arrive in any order (docs/webhooks.md, Order and duplicates); `sequence` tells the order the
    // events happened in.
    const sequenceOf = (event: string) => events.find((d) => d.event === event)!.sequence;
    expect(sequenceOf('approver.rejected')).toBeLessThan(sequenceOf('document.rejected'));
  }, 240_000);

  it('sends document.voided and lists the new events', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [{ name: 'Voided', phone: freshPhone(), action_type: 'approve_only' }],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const voided = await api(`/documents/${doc.id}/void`, { method: 'POST', body: {} });
    expect(voided.status, JSON.stringify(voided.body)).toBe(200);
    await eventually(() => deliveries(doc.id).find((d) => d.event === 'document.voided'), 60_000);

    const catalogue = await api('/webhooks/events');
    const names = (catalogue.body.data as unknown as { event: string }[]).map((e) => e.event);
    for (const event of [
      'approver.notified',
      'approver.viewed',
      'approver.rejected',
      'approver.delegated',
      'document.voided',
      'document.expired',
    ]) {
      expect(names).toContain(event);
    }
  }, 120_000);
});
