import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { createApp } from '../../src/api/app.ts';
import { envelope, pageEnvelope } from '../../src/api/schemas/envelopes.ts';
import {
  DeliveryResource,
  TestDeliveryResource,
  WebhookResource,
  WebhookWithSecretResource,
} from '../../src/features/webhooks/schemas.ts';
import { SUBSCRIBABLE_EVENTS } from '../../src/features/webhooks/events.ts';
import { Webhook } from 'standardwebhooks';
import { webhooksStore } from '../../src/features/webhooks/webhooks-store.ts';
import { isWebhookSecret, standardWebhooksSecret } from '../../src/features/webhooks/signature.ts';
import {
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../fakes/webhook-receiver.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';
import { freePort } from '../setup/free-port.ts';
import { bodyOf, createWebhook, expectVerified, readmeVerifier, selfSignedCertificate } from './support.ts';

/**
 * The webhook endpoints over real HTTP against the real app and PostgreSQL. Delivery through Temporal is in
 * delivery-workflow.test.ts; `POST /webhooks/{id}/test` sends within the request, so no worker runs here.
 */

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService({ worker: false, env: { WEBHOOK_TIMEOUT_MS: '1000' } });
  account = await service.createAccount();
});
afterAll(() => service.close());

const receivers: WebhookReceiver[] = [];
async function receiver(options: WebhookReceiverOptions = {}) {
  const r = await startWebhookReceiver(options);
  receivers.push(r);
  return r;
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

interface Envelope<T = unknown> {
  success: boolean;
  data: T;
  meta?: { current_page: number; per_page: number; total: number; last_page: number };
  error?: { code: number; message: string; details: Record<string, string[]> };
}

async function call<T = unknown>(
  path: string,
  init: RequestInit & { account?: TestAccount } = {},
  via: TestService = service,
): Promise<{ status: number; body: Envelope<T>; text: string }> {
  const res = await via.request(path, { account, ...init });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Envelope<T>, text };
}
const post = (path: string, body?: unknown, who: TestAccount = account) =>
  call(path, { method: 'POST', account: who, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const put = (path: string, body: unknown, who: TestAccount = account) =>
  call(path, { method: 'PUT', account: who, body: JSON.stringify(body) });

interface WebhookJson {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  disabled_reason: string | null;
  secret?: string;
}

describe('GET /webhooks/events', () => {
  it('lists the subscribable events with a description each, and not webhook.test', async () => {
    const { status, body } = await call<{ event: string; description: string }[]>('/webhooks/events');
    expect(status).toBe(200);
    expect(body.data.map((e) => e.event)).toEqual([...SUBSCRIBABLE_EVENTS]);
    expect(body.data.map((e) => e.event)).toEqual(
      expect.arrayContaining(['document.voided', 'document.expired']),
    );
    for (const e of body.data) expect(e.description.length).toBeGreaterThan(10);
  });
});

describe('creating and reading webhooks', () => {
  it('returns the secret once, never in a list or a get', async () => {
    const created = await post('/webhooks', {
      url: 'https://hooks.example.com/wathiq',
      events: ['document.approved', 'document.sent', 'document.approved'],
    });
    expect(created.status).toBe(201);
    const hook = envelope(WebhookWithSecretResource).parse(created.body).data;
    expect(isWebhookSecret(hook.secret)).toBe(true);
    expect(hook).toMatchObject({
      url: 'https://hooks.example.com/wathiq',
      events: ['document.approved', 'document.sent'],
      active: true,
      disabled_reason: null,
    });

    const got = await call(`/webhooks/${hook.id}`);
    expect(envelope(WebhookResource).parse(got.body).data.id).toBe(hook.id);
    const list = await call('/webhooks?per_page=100');
    pageEnvelope(WebhookResource).parse(list.body);
    for (const text of [got.text, list.text]) {
      expect(text).not.toContain(hook.secret);
      expect(text).not.toContain('whsec_');
    }
  });

  it('paginates the list like documents', async () => {
    const own = await service.createAccount();
    for (let i = 0; i < 3; i++) {
      await post('/webhooks', { url: `https://hooks.example.com/${i}`, events: ['document.sent'] }, own);
    }
    const first = await call<WebhookJson[]>('/webhooks?per_page=2', { account: own });
    expect(first.body.meta).toEqual({ current_page: 1, per_page: 2, total: 3, last_page: 2 });
    expect(first.body.data.map((w) => w.url)).toEqual([
      'https://hooks.example.com/2',
      'https://hooks.example.com/1',
    ]);
    const second = await call<WebhookJson[]>('/webhooks?page=2&per_page=2', { account: own });
    expect(second.body.data.map((w) => w.url)).toEqual(['https://hooks.example.com/0']);
    const defaults = await call('/webhooks', { account: own });
    expect(defaults.body.meta).toMatchObject({ current_page: 1, per_page: 15 });
    for (const q of ['per_page=0', 'per_page=101', 'page=0', 'page=abc']) {
      const bad = await call(`/webhooks?${q}`, { account: own });
      expect(bad.status, q).toBe(422);
    }
  });

  it('refuses bad input with 422 and the field that is wrong', async () => {
    const empty = await post('/webhooks', {});
    expect(empty.status).toBe(422);
    expect(empty.body.error).toMatchObject({ code: 422, message: 'Validation failed' });
    expect(Object.keys(empty.body.error!.details).sort()).toEqual(['events', 'url']);

    const unknown = await post('/webhooks', {
      url: 'https://hooks.example.com/x',
      events: ['document.sent', 'document.completed'],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error!.details['events.1']![0]).toMatch(
      /document\.completed.*GET \/webhooks\/events/,
    );

    const test = await post('/webhooks', { url: 'https://hooks.example.com/x', events: ['webhook.test'] });
    expect(test.body.error!.details['events.0']).toBeDefined();
    expect((await post('/webhooks', { url: 'https://hooks.example.com/x', events: [] })).status).toBe(422);
    expect(
      (await post('/webhooks', { url: 'not a url', events: ['document.sent'] })).body.error!.details.url,
    ).toBeDefined();

    const form = await call('/webhooks', {
      method: 'POST',
      account,
      headers: { 'content-type': 'text/plain' },
      body: 'url=x',
    });
    expect(form.status).toBe(415);
  });

  it('needs webhooks:read to read and webhooks:write to change', async () => {
    const reader = await service.createAccount({ scopes: ['webhooks:read'] });
    const stranger = await service.createAccount({ scopes: ['documents:read', 'documents:write'] });
    expect((await call('/webhooks', { account: reader })).status).toBe(200);
    expect((await call('/webhooks/events', { account: reader })).status).toBe(200);
    const refused = await post(
      '/webhooks',
      { url: 'https://hooks.example.com/x', events: ['document.sent'] },
      reader,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error!.message).toContain('webhooks:write');
    expect((await call('/webhooks', { account: stranger })).status).toBe(403);
    expect((await call('/webhooks/events', { account: stranger })).status).toBe(403);
    expect((await call('/webhooks')).status).toBe(200);
    expect((await call('/webhooks', { account: undefined })).status).toBe(401);
  });

  it('a key with webhooks scopes only cannot point a webhook elsewhere or resend what it received', async () => {
    const owned = await receiver();
    const hook = await createWebhook(service, account, { url: owned.url, events: ['document.sent'] });
    const sent = await post(`/webhooks/${hook.id}/test`);
    const deliveryId = (sent.body.data as { delivery_id: number }).delivery_id;
    const elsewhere = await receiver();
    // A key of the same account, so the webhook is its own and only the scopes can refuse.
    const issued = await issueApiKey(service.database.db, {
      accountId: account.accountId,
      name: 'webhooks only',
      scopes: ['webhooks:read', 'webhooks:write'],
    });
    const webhooksOnly: TestAccount = {
      accountId: account.accountId,
      apiKeyId: issued.apiKey.id,
      key: issued.apiKey.key,
      secret: issued.secret,
      authorization: `Bearer ${issued.apiKey.key}:${issued.secret}`,
    };

    const moved = await put(`/webhooks/${hook.id}`, { url: elsewhere.url }, webhooksOnly);
    expect(moved.status).toBe(403);
    expect(moved.body.error!.message).toBe(
      'This API key lacks the "documents:read" scope (this operation needs webhooks:write and documents:read)',
    );
    expect(
      (await post('/webhooks', { url: elsewhere.url, events: ['document.sent'] }, webhooksOnly)).status,
    ).toBe(403);
    expect((await post(`/webhooks/deliveries/${deliveryId}/redeliver`, undefined, webhooksOnly)).status).toBe(
      403,
    );
    // What the scopes do allow still works: reading, testing the webhook where it points, rotating, deleting.
    expect((await call(`/webhooks/${hook.id}`, { account: webhooksOnly })).body.data).toMatchObject({
      url: owned.url,
    });
    expect((await post(`/webhooks/${hook.id}/test`, undefined, webhooksOnly)).status).toBe(200);
    expect(elsewhere.requests).toHaveLength(0);
    expect((await post(`/webhooks/${hook.id}/rotate-secret`, undefined, webhooksOnly)).status).toBe(200);
    expect((await call(`/webhooks/${hook.id}`, { method: 'DELETE', account: webhooksOnly })).status).toBe(
      200,
    );
  });
});

describe('another account', () => {
  it('sees none of this account’s webhooks or deliveries: 404 everywhere', async () => {
    const r = await receiver();
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    const sent = await post(`/webhooks/${hook.id}/test`);
    const deliveryId = (sent.body.data as { delivery_id: number }).delivery_id;

    const other = await service.createAccount();
    const paths: [string, RequestInit][] = [
      [`/webhooks/${hook.id}`, {}],
      [`/webhooks/${hook.id}`, { method: 'PUT', body: JSON.stringify({ active: false }) }],
      [`/webhooks/${hook.id}`, { method: 'DELETE' }],
      [`/webhooks/${hook.id}/test`, { method: 'POST' }],
      [`/webhooks/${hook.id}/rotate-secret`, { method: 'POST' }],
      [`/webhooks/${hook.id}/deliveries`, {}],
      [`/webhooks/deliveries/${deliveryId}/redeliver`, { method: 'POST' }],
    ];
    for (const [path, init] of paths) {
      const res = await call(path, { ...init, account: other });
      expect(res.status, `${init.method ?? 'GET'} ${path}`).toBe(404);
    }
    expect(r.requests).toHaveLength(1); // only this account's own test
    expect((await call<WebhookJson>(`/webhooks/${hook.id}`)).body.data.active).toBe(true);
    expect((await call('/webhooks', { account: other })).body.meta!.total).toBe(0);

    for (const path of [
      '/webhooks/not-a-uuid',
      '/webhooks/deliveries/abc/redeliver',
      '/webhooks/deliveries/0/redeliver',
    ]) {
      const res = await call(path, { method: path.endsWith('redeliver') ? 'POST' : 'GET' });
      expect(res.status, path).toBe(404);
    }
  });
});

describe('updating and deleting', () => {
  it('changes url, events and active; validates like creation; deletes', async () => {
    const hook = await createWebhook(service, account, {
      url: 'https://hooks.example.com/a',
      events: ['document.sent'],
    });
    const changed = await put(`/webhooks/${hook.id}`, {
      url: 'https://hooks.example.com/b',
      events: ['document.voided', 'document.expired'],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      url: 'https://hooks.example.com/b',
      events: ['document.voided', 'document.expired'],
      active: true,
    });
    expect(changed.text).not.toContain('whsec_');

    expect((await put(`/webhooks/${hook.id}`, { events: ['document.signed'] })).status).toBe(422);
    expect((await put(`/webhooks/${hook.id}`, { url: 'gopher://x' })).status).toBe(422);
    expect((await put(`/webhooks/${hook.id}`, { active: 'no' })).status).toBe(422);
    // {} changes nothing (not even updated_at) and answers the webhook as it is.
    const unchanged = await put(`/webhooks/${hook.id}`, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data).toEqual(changed.body.data);

    const off = await put(`/webhooks/${hook.id}`, { active: false });
    expect(off.body.data).toMatchObject({ active: false });
    const on = await put(`/webhooks/${hook.id}`, { active: true });
    expect(on.body.data).toMatchObject({ active: true, disabled_reason: null });

    const deleted = await call(`/webhooks/${hook.id}`, { method: 'DELETE' });
    expect(deleted.body).toEqual({ success: true, data: { id: hook.id, deleted: true } });
    expect((await call(`/webhooks/${hook.id}`)).status).toBe(404);
    expect((await call(`/webhooks/${hook.id}`, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('POST /webhooks/{id}/test', () => {
  it('sends a signed webhook.test now, answers with the status alone, and records it as a delivery', async () => {
    const r = await receiver();
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    const res = await post(`/webhooks/${hook.id}/test`);
    expect(res.status).toBe(200);
    const result = envelope(TestDeliveryResource).parse(res.body).data;
    expect(result).toMatchObject({ ok: true, status_code: 200, error_class: null });

    const [req] = r.requests;
    await expectVerified(r.requests, hook.secret);
    expect(req!.headers['x-wathiq-event']).toBe('webhook.test');
    expect(req!.headers['x-wathiq-delivery']).toBe(String(result.delivery_id));
    const body = bodyOf(req!);
    expect(body).toMatchObject({ id: result.delivery_id, event: 'webhook.test' });
    expect(body.data).toMatchObject({ webhook: { id: hook.id, url: r.url } });

    const listed = await call(`/webhooks/${hook.id}/deliveries`);
    const [delivery] = pageEnvelope(DeliveryResource).parse(listed.body).data;
    expect(delivery).toMatchObject({
      id: result.delivery_id,
      event: 'webhook.test',
      status: 'succeeded',
      attempt_count: 1,
      last_status_code: 200,
      attempts: [{ attempt_number: 1, status_code: 200, error_class: null }],
    });
    expect(delivery!.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('signs every delivery both ways: the X-Wathiq-* recipe and Standard Webhooks', async () => {
    const r = await receiver();
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // A secret made before standard base64 was used (base64url, 43 characters), as still stored for old webhooks.
    const legacySecret = 'whsec_' + Buffer.alloc(32, 0xfb).toString('base64url');
    expect(legacySecret).toMatch(/[-_]/);
    const legacy = await webhooksStore(service.database.db).create(
      { accountId: account.accountId, url: r.url, events: ['document.sent'], secret: legacySecret },
      service.deps.secrets,
    );

    for (const [id, secret] of [
      [hook.id, hook.secret],
      [legacy.id, legacySecret],
    ] as const) {
      const res = await post(`/webhooks/${id}/test`);
      expect(res.body.data).toMatchObject({ ok: true, status_code: 200 });
      const req = r.requests.at(-1)!;
      await expectVerified([req], secret);
      const delivery = (res.body.data as { delivery_id: number }).delivery_id;
      expect(req.headers['webhook-id']).toBe(String(delivery));
      expect(req.headers['webhook-timestamp']).toBe(req.headers['x-wathiq-timestamp']);
      expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      const headers = {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      };
      const verified = new Webhook(standardWebhooksSecret(secret)).verify(
        req.rawBody.toString('utf8'),
        headers,
      );
      expect(verified).toMatchObject({ id: delivery, event: 'webhook.test' });
      expect(() =>
        new Webhook(standardWebhooksSecret(secret)).verify(`${req.rawBody.toString('utf8')} `, headers),
      ).toThrow();
    }
    // A secret made now goes to the verifier exactly as the API answered it.
    const last = r.requests.at(-2)!;
    expect(() =>
      new Webhook(hook.secret).verify(last.rawBody.toString('utf8'), {
        'webhook-id': String(last.headers['webhook-id']),
        'webhook-timestamp': String(last.headers['webhook-timestamp']),
        'webhook-signature': String(last.headers['webhook-signature']),
      }),
    ).not.toThrow();
  });

  it('never returns the receiver’s body, and reports failures by class', async () => {
    const r = await receiver({
      steps: [
        { status: 500, body: 'Traceback: password=hunter2 at internal-db-7' },
        { status: 302, headers: { location: 'https://elsewhere.example/' }, body: 'moved' },
        { hang: true },
      ],
    });
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    const failing = await post(`/webhooks/${hook.id}/test`);
    expect(failing.body.data).toMatchObject({ ok: false, status_code: 500, error_class: 'http_status' });
    expect(failing.text).not.toContain('hunter2');
    expect(failing.text).not.toContain('Traceback');

    const redirect = await post(`/webhooks/${hook.id}/test`);
    expect(redirect.body.data).toMatchObject({ ok: false, status_code: 302, error_class: 'http_status' });
    expect(redirect.text).not.toContain('elsewhere.example');
    expect(r.requests.map((q) => q.path)).toEqual(['/hooks/wathiq', '/hooks/wathiq']);

    const slow = await post(`/webhooks/${hook.id}/test`);
    expect(slow.body.data).toMatchObject({ ok: false, status_code: null, error_class: 'timeout' });

    const listed = await call(`/webhooks/${hook.id}/deliveries?per_page=2`);
    expect(listed.body.meta).toMatchObject({ total: 3, last_page: 2 });
    expect(listed.text).not.toContain('hunter2');
    const deliveries = listed.body.data as {
      status: string;
      failure_reason: string | null;
      attempts: unknown[];
    }[];
    expect(deliveries.map((d) => d.status)).toEqual(['failed', 'failed']);
    expect(deliveries[0]!.failure_reason).toMatch(/not retried/);
  });

  it('reports each failure by class, never with a socket error, an address or a port; so does the list', async () => {
    const closedPort = await freePort();
    const hanging = await receiver({ steps: [{ hang: true }] });
    const failing = await receiver({ steps: [{ status: 500, body: 'upstream 10.20.30.40:5432 refused' }] });
    const tls = https.createServer(selfSignedCertificate(), (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const tlsPort = (tls.address() as AddressInfo).port;
    try {
      const cases = [
        {
          url: `http://127.0.0.1:${closedPort}/hooks`,
          port: closedPort,
          expected: {
            status_code: null,
            error_class: 'connection_refused',
            error_message: 'The receiver refused the connection (nothing accepts connections on that port)',
          },
        },
        {
          url: hanging.url,
          port: hanging.port,
          expected: { status_code: null, error_class: 'timeout', error_message: 'No answer within 1000 ms' },
        },
        {
          url: `https://127.0.0.1:${tlsPort}/hooks`,
          port: tlsPort,
          expected: {
            status_code: null,
            error_class: 'tls',
            error_message: 'TLS: the receiver’s certificate is self-signed',
          },
        },
        {
          url: failing.url,
          port: failing.port,
          expected: { status_code: 500, error_class: 'http_status', error_message: 'Receiver answered 500' },
        },
      ];
      for (const c of cases) {
        const hook = await createWebhook(service, account, { url: c.url, events: ['document.sent'] });
        const sent = await post(`/webhooks/${hook.id}/test`);
        expect(sent.status).toBe(200);
        expect(envelope(TestDeliveryResource).parse(sent.body).data).toMatchObject({
          ok: false,
          ...c.expected,
        });
        const listed = await call(`/webhooks/${hook.id}/deliveries`);
        const [delivery] = pageEnvelope(DeliveryResource).parse(listed.body).data;
        expect(delivery!.attempts).toMatchObject([c.expected]);
        for (const text of [sent.text, listed.text]) {
          expect(text).not.toContain(String(c.port));
          expect(text).not.toMatch(/127\.0\.0\.1|10\.20\.30\.40|ECONN|EPROTO|self.signed cert|getaddrinfo/i);
        }
      }
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it('sends to a disabled webhook too, and a disabled webhook’s deliveries cannot be redelivered', async () => {
    const r = await receiver({ steps: [{ status: 503 }] });
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    const failed = await post(`/webhooks/${hook.id}/test`);
    const deliveryId = (failed.body.data as { delivery_id: number }).delivery_id;
    await put(`/webhooks/${hook.id}`, { active: false });
    expect((await post(`/webhooks/${hook.id}/test`)).body.data).toMatchObject({ ok: true });
    const refused = await post(`/webhooks/deliveries/${deliveryId}/redeliver`);
    expect(refused.status).toBe(409);
    expect(refused.body.error!.message).toMatch(/disabled/);
  });
});

describe('rotating the secret', () => {
  it('signs with the new secret at once; the old one no longer verifies', async () => {
    const r = await receiver({ refuseUnverified: true });
    const hook = await createWebhook(service, account, { url: r.url, events: ['document.sent'] });
    r.setSecret(hook.secret);
    expect((await post(`/webhooks/${hook.id}/test`)).body.data).toMatchObject({ ok: true, status_code: 200 });

    const rotated = await post(`/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = envelope(WebhookWithSecretResource).parse(rotated.body).data.secret;
    expect(isWebhookSecret(fresh)).toBe(true);
    expect(fresh).not.toBe(hook.secret);

    // The receiver still holds the old secret: it refuses the delivery.
    expect((await post(`/webhooks/${hook.id}/test`)).body.data).toMatchObject({
      ok: false,
      status_code: 401,
    });
    const verify = await readmeVerifier();
    const last = r.requests.at(-1)!;
    expect(verify(hook.secret, last.headers, last.rawBody)).toBe(false);
    expect(verify(fresh, last.headers, last.rawBody)).toBe(true);

    r.setSecret(fresh);
    expect((await post(`/webhooks/${hook.id}/test`)).body.data).toMatchObject({ ok: true });

    for (const path of [
      `/webhooks/${hook.id}`,
      '/webhooks?per_page=100',
      `/webhooks/${hook.id}/deliveries`,
    ]) {
      const { text } = await call(path);
      expect(text).not.toContain(fresh);
      expect(text).not.toContain(hook.secret);
    }
  });
});

describe('the SSRF guard at creation (WEBHOOK_ALLOW_PRIVATE=false)', () => {
  let guarded: TestService;
  let server: http.Server;
  let rebindTo = '93.184.216.34';
  const names: Record<string, () => string[]> = {
    'hooks.customer.test': () => ['93.184.216.34'],
    'loopback.customer.test': () => ['127.0.0.1'],
    'mixed.customer.test': () => ['93.184.216.34', '10.1.2.3'],
    'metadata.customer.test': () => ['169.254.169.254'],
    'v6.customer.test': () => ['::1'],
    'rebind.customer.test': () => [rebindTo],
  };
  const resolve = (host: string) => {
    const found = names[host];
    return found
      ? Promise.resolve(found())
      : Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }));
  };

  beforeAll(async () => {
    // The same service with the guard on, built as production runs it but with a resolver of the test's own.
    const config = { ...service.config, webhooks: { ...service.config.webhooks, allowPrivate: false } };
    const app = createApp({ ...service.deps, config, webhookResolve: resolve });
    const handle = app.callback();
    server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    guarded = {
      ...service,
      baseUrl: base,
      request: (path, init = {}) => {
        const { account: who, headers, ...rest } = init;
        const h = new Headers(headers);
        if (who) h.set('authorization', who.authorization);
        if (typeof rest.body === 'string') h.set('content-type', 'application/json');
        return fetch(`${base}${path}`, { ...rest, headers: h });
      },
    };
  });
  afterAll(async () => {
    await new Promise<void>((done) => server.close(() => done()));
  });

  const create = (url: string) =>
    call(
      '/webhooks',
      { method: 'POST', account, body: JSON.stringify({ url, events: ['document.sent'] }) },
      guarded,
    );

  it.each([
    'http://127.0.0.1/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/hook',
    'http://[fc00::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://100.64.0.1/hook',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://192.168.1.20:8080/',
    'http://localhost:3000/hook',
    'http://loopback.customer.test/hook',
    'http://mixed.customer.test/hook',
    'https://metadata.customer.test/',
    'http://v6.customer.test/',
    'http://nowhere.customer.test/',
    'ftp://hooks.customer.test/',
    'file:///etc/passwd',
    'https://user:secret@hooks.customer.test/',
  ])('refuses %s with 422 on url', async (url) => {
    const { status, body } = await create(url);
    expect(status).toBe(422);
    expect(body.error!.details.url?.[0]).toBeTruthy();
  });

  it('accepts a public name, and refuses a private url on update too', async () => {
    const ok = await create('https://hooks.customer.test/wathiq');
    expect(ok.status).toBe(201);
    const id = (ok.body.data as { id: string }).id;
    const moved = await call(
      `/webhooks/${id}`,
      { method: 'PUT', account, body: JSON.stringify({ url: 'http://10.0.0.1/' }) },
      guarded,
    );
    expect(moved.status).toBe(422);
    expect(moved.body.error!.details.url).toBeDefined();
  });

  it('checks the address actually connected to: a name that re-resolves to loopback is not called', async () => {
    const r = await receiver();
    rebindTo = '93.184.216.34';
    const created = await create(`http://rebind.customer.test:${r.port}/hooks/wathiq`);
    expect(created.status).toBe(201);
    const id = (created.body.data as { id: string }).id;
    rebindTo = '127.0.0.1'; // DNS rebinding: the name now points at the receiver on loopback
    const sent = await call(`/webhooks/${id}/test`, { method: 'POST', account }, guarded);
    expect(sent.body.data).toMatchObject({ ok: false, status_code: null, error_class: 'blocked_address' });
    expect(sent.text).not.toContain('127.0.0.1');
    expect(r.requests).toHaveLength(0);
  });
});

describe('OpenAPI', () => {
  it('describes every webhook endpoint', async () => {
    const res = await fetch(`${service.baseUrl}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    expect(
      Object.keys(doc.paths)
        .filter((p) => p.startsWith('/webhooks'))
        .sort(),
    ).toEqual([
      '/webhooks',
      '/webhooks/deliveries/{id}/redeliver',
      '/webhooks/events',
      '/webhooks/{id}',
      '/webhooks/{id}/deliveries',
      '/webhooks/{id}/rotate-secret',
      '/webhooks/{id}/test',
    ]);
    expect(Object.keys(doc.paths['/webhooks/{id}']!).sort()).toEqual(['delete', 'get', 'put']);
  });
});
