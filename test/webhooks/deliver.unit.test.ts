import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverOnce, parseRetryAfter, type DeliverOnceInput } from '../../src/features/webhooks/deliver.ts';
import { buildEventBody } from '../../src/features/webhooks/payload.ts';
import { generateWebhookSecret, signWebhook } from '../../src/features/webhooks/signature.ts';
import { assertWebhookUrl } from '../../src/features/webhooks/ssrf-guard.ts';
import { freePort } from '../setup/free-port.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { KNOWN_ANSWER } from './known-answer.ts';
import { selfSignedCertificate } from './support.ts';

const secret = generateWebhookSecret();
const body = buildEventBody({
  deliveryId: 7,
  event: 'document.sent',
  sequence: 2,
  createdAt: new Date('2026-11-22T09:41:00Z'),
  data: { document: { id: 'e4b8c9f0-0000-4000-8000-000000000001', title_ar: 'عقد', title_en: 'Contract' } },
});

const receivers: WebhookReceiver[] = [];
async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}) {
  const r = await startWebhookReceiver({ secret, ...options });
  receivers.push(r);
  return r;
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const attempt = (url: string, extra: Partial<DeliverOnceInput> = {}) =>
  deliverOnce({ url, event: 'document.sent', deliveryId: 7, body, secret, allowPrivate: true, ...extra });

/** A name that exists only in the test's resolver: connecting to it proves the connection used that resolver. */
const fakeDns = (address: string) => (host: string) =>
  host === 'hooks.customer.test'
    ? Promise.resolve([address])
    : Promise.reject(new Error(`unexpected ${host}`));

describe('deliverOnce', () => {
  it('POSTs the body byte for byte with headers that verify the way the receiver guide says', async () => {
    const r = await receiver();
    const result = await attempt(r.url);
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(result.errorClass).toBeUndefined();
    expect(result.ms).toBeGreaterThanOrEqual(0);

    const [req] = await r.waitForRequests(1);
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe('/hooks/wathiq');
    expect(req!.rawBody.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(req!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Wathiq-Webhooks/1',
      'x-wathiq-event': 'document.sent',
      'x-wathiq-delivery': '7',
      'x-wathiq-timestamp': String(result.timestamp),
      'x-wathiq-signature': signWebhook({ secret, timestamp: result.timestamp, body }),
    });
    expect(req!.verification).toEqual({ ok: true, timestamp: result.timestamp });
    expect(Math.abs(result.timestamp - Date.now() / 1000)).toBeLessThan(60);
  });

  it('sends identical bodies and the same delivery id on every attempt, with a fresh timestamp each time', async () => {
    const r = await receiver();
    const t0 = Date.now();
    const bodyWithArabic = KNOWN_ANSWER.body;
    const first = await attempt(r.url, { body: bodyWithArabic, deliveryId: 42, now: () => new Date(t0) });
    const second = await attempt(r.url, {
      body: bodyWithArabic,
      deliveryId: 42,
      now: () => new Date(t0 + 65_000),
    });
    expect(second.timestamp - first.timestamp).toBe(65);
    const [a, b] = await r.waitForRequests(2);
    expect(a!.rawBody.equals(b!.rawBody)).toBe(true);
    expect(a!.rawBody.equals(Buffer.from(KNOWN_ANSWER.body, 'utf8'))).toBe(true);
    expect([a!.headers['x-wathiq-delivery'], b!.headers['x-wathiq-delivery']]).toEqual(['42', '42']);
    expect(a!.headers['x-wathiq-signature']).not.toBe(b!.headers['x-wathiq-signature']);
    expect([a!.verification?.ok, b!.verification?.ok]).toEqual([true, true]);
  });

  it('a receiver that checks signatures refuses a delivery signed with another secret (after a rotation)', async () => {
    const r = await receiver({ refuseUnverified: true });
    const result = await attempt(r.url, { secret: generateWebhookSecret() });
    expect(result).toMatchObject({ ok: false, status: 401, errorClass: 'http_status' });
    const [req] = await r.waitForRequests(1);
    expect(req!.verification).toEqual({ ok: false, reason: 'bad_signature' });
    expect(await attempt(r.url)).toMatchObject({ ok: true, status: 200 });
  });

  it('counts any 2xx as success', async () => {
    const r = await receiver({ steps: [{ status: 201 }, { status: 202 }, { status: 204 }, { status: 299 }] });
    for (const status of [201, 202, 204, 299]) {
      expect(await attempt(r.url)).toMatchObject({ ok: true, status });
    }
  });

  it('records a 500 as http_status and keeps only a short excerpt of the answer, out of the message', async () => {
    const answer = `internal details ${'x'.repeat(5000)} END-OF-BODY`;
    const r = await receiver({ steps: [{ status: 500, body: answer }] });
    const result = await attempt(r.url);
    expect(result).toMatchObject({ ok: false, status: 500, errorClass: 'http_status' });
    expect(result.errorMessage).toBe('Receiver answered 500');
    expect(result.responseExcerpt?.startsWith('internal details')).toBe(true);
    expect(result.responseExcerpt!.length).toBeLessThanOrEqual(256);
    expect(JSON.stringify(result)).not.toContain('END-OF-BODY');
    expect(result.gone).toBeUndefined();
    expect(result.retryAfterMs).toBeUndefined();
  });

  it('does not follow a 302 and records it as an http_status failure; the Location is for the log only', async () => {
    const r = await receiver({ steps: [{ status: 302, headers: { location: '/moved-here' } }] });
    const result = await attempt(r.url);
    expect(result).toMatchObject({ ok: false, status: 302, errorClass: 'http_status' });
    expect(result.errorMessage).toBe(
      'Receiver answered 302; redirects are not followed, point the webhook at the final URL',
    );
    expect(result.detail).toContain('/moved-here');
    await r.waitForRequests(1);
    expect(r.requests.map((q) => q.path)).toEqual(['/hooks/wathiq']);
  });

  it('reports 410 Gone as gone', async () => {
    const r = await receiver({ steps: [{ status: 410 }] });
    expect(await attempt(r.url)).toMatchObject({
      ok: false,
      status: 410,
      errorClass: 'http_status',
      gone: true,
    });
  });

  it('reads Retry-After on 429 (seconds) and 503 (HTTP date), and only there', async () => {
    const now = new Date(Date.now());
    const inTwoMinutes = new Date(Math.floor(now.getTime() / 1000) * 1000 + 120_000).toUTCString();
    const r = await receiver({
      steps: [
        { status: 429, headers: { 'retry-after': '120' } },
        { status: 503, headers: { 'retry-after': inTwoMinutes } },
        { status: 429 },
        { status: 500, headers: { 'retry-after': '120' } },
      ],
    });
    expect(await attempt(r.url, { now: () => now })).toMatchObject({
      ok: false,
      status: 429,
      errorClass: 'http_status',
      retryAfterMs: 120_000,
    });
    const fromDate = await attempt(r.url, { now: () => now });
    expect(fromDate).toMatchObject({ status: 503 });
    expect(fromDate.retryAfterMs).toBeGreaterThan(119_000);
    expect(fromDate.retryAfterMs).toBeLessThanOrEqual(120_000);
    expect((await attempt(r.url)).retryAfterMs).toBeUndefined();
    expect((await attempt(r.url)).retryAfterMs).toBeUndefined();
  });

  it('gives up after timeoutMs when the receiver never answers', async () => {
    const r = await receiver({ steps: [{ hang: true }] });
    const result = await attempt(r.url, { timeoutMs: 300 });
    expect(result).toMatchObject({
      ok: false,
      errorClass: 'timeout',
      errorMessage: 'No answer within 300 ms',
    });
    expect(result.status).toBeUndefined();
    expect(r.requests).toHaveLength(1);
  });

  it('refuses at connect time a name that resolves to loopback, without calling it', async () => {
    const r = await receiver();
    const url = `http://hooks.customer.test:${r.port}/hooks/wathiq`;
    const result = await attempt(url, { allowPrivate: false, lookup: fakeDns('127.0.0.1') });
    expect(result).toMatchObject({ ok: false, errorClass: 'blocked_address' });
    expect(result.errorMessage).not.toContain('127.0.0.1');
    expect(result.detail).toContain('127.0.0.1');
    expect(result.status).toBeUndefined();
    expect(r.requests).toHaveLength(0);

    // The same connection path with the guard lifted reaches the receiver through the injected resolver.
    expect(await attempt(url, { allowPrivate: true, lookup: fakeDns('127.0.0.1') })).toMatchObject({
      ok: true,
    });
    expect(r.requests).toHaveLength(1);
  });

  it('judges the address at delivery, not the one seen at creation (DNS rebinding)', async () => {
    const r = await receiver();
    const url = `http://hooks.customer.test:${r.port}/hooks/wathiq`;
    let answers = ['93.184.215.14'];
    const rebinding = () => Promise.resolve(answers);
    await expect(assertWebhookUrl(url, { resolve: rebinding })).resolves.toBeInstanceOf(URL);
    answers = ['127.0.0.1'];
    const result = await attempt(url, { allowPrivate: false, lookup: rebinding });
    expect(result.errorClass).toBe('blocked_address');
    expect(r.requests).toHaveLength(0);
  });

  it.each([
    'http://127.0.0.1:{port}/hooks',
    'http://[::1]:{port}/',
    'http://2130706433:{port}/',
    'http://[::ffff:7f00:1]:{port}/',
  ])('refuses the literal address %s without connecting', async (template) => {
    const r = await receiver();
    const result = await attempt(template.replace('{port}', String(r.port)), { allowPrivate: false });
    expect(result.errorClass).toBe('blocked_address');
    expect(r.requests).toHaveLength(0);
  });

  it('refuses non-http schemes and credentials even when private addresses are allowed', async () => {
    expect((await attempt('ftp://127.0.0.1/x')).errorClass).toBe('blocked_address');
    expect((await attempt('http://u:p@127.0.0.1/x')).errorClass).toBe('blocked_address');
    expect((await attempt('not a url')).errorClass).toBe('blocked_address');
  });

  it('classifies a refused connection and a failed lookup', async () => {
    const closedPort = await freePort();
    const refused = await attempt(`http://127.0.0.1:${closedPort}/`);
    expect(refused).toMatchObject({
      ok: false,
      errorClass: 'connection_refused',
      errorMessage: 'The receiver refused the connection (nothing accepts connections on that port)',
    });
    // The socket error, with its address and port, is kept for the log alone.
    expect(refused.detail).toContain(`127.0.0.1:${closedPort}`);
    const noSuchName = () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    const result = await attempt('http://hooks.customer.test/', { allowPrivate: false, lookup: noSuchName });
    expect(result).toMatchObject({
      ok: false,
      errorClass: 'dns',
      errorMessage: 'The webhook URL’s host name did not resolve',
    });
    expect(await attempt('http://hooks.customer.test/', { lookup: () => Promise.resolve([]) })).toMatchObject(
      {
        errorClass: 'dns',
      },
    );
  });

  it('classifies an untrusted TLS certificate as tls', async () => {
    const server = https.createServer(selfSignedCertificate(), (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await attempt(`https://127.0.0.1:${port}/`);
      expect(result).toMatchObject({
        ok: false,
        errorClass: 'tls',
        errorMessage: 'TLS: the receiver’s certificate is self-signed',
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-11-22T09:41:00Z');
  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Sun, 22 Nov 2026 09:42:00 GMT', 60_000],
    ['Sunday, 22-Nov-26 09:42:00 GMT', 60_000],
    ['Sun Nov 22 09:42:00 2026', 60_000],
    ['Sun, 22 Nov 2026 09:00:00 GMT', 0],
    ['-5', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%s → %s', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
