import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  EVENT_CATALOGUE,
  EVENT_DESCRIPTIONS,
  isSubscribableEvent,
  SUBSCRIBABLE_EVENTS,
} from '../../src/features/webhooks/events.ts';
import { isoTime } from '../../src/domain/time.ts';
import { buildEventBody } from '../../src/features/webhooks/payload.ts';
import {
  generateWebhookSecret,
  isWebhookSecret,
  signStandardWebhook,
  signWebhook,
  standardWebhookKey,
  standardWebhooksSecret,
  verifyWebhook,
} from '../../src/features/webhooks/signature.ts';
import { KNOWN_ANSWER as K } from './known-answer.ts';

const at = (seconds: number) => new Date(seconds * 1000);

function signedHeaders(secret: string, timestamp: number, body: string | Buffer) {
  return {
    'x-wathiq-timestamp': String(timestamp),
    'x-wathiq-signature': signWebhook({ secret, timestamp, body }),
  };
}

describe('webhook signatures', () => {
  it('matches the known-answer vector computed with openssl', () => {
    expect(Buffer.byteLength(K.body, 'utf8')).toBe(356);
    expect(signWebhook({ secret: K.secret, timestamp: K.timestamp, body: K.body })).toBe(K.signature);
    expect(signWebhook({ secret: K.secret, timestamp: String(K.timestamp), body: Buffer.from(K.body) })).toBe(
      K.signature,
    );
  });

  it('keys the HMAC with the whole secret string, prefix included, not its decoded bytes', () => {
    const decoded = Buffer.from(K.secret.slice('whsec_'.length), 'base64url');
    const withDecodedKey = createHmac('sha256', decoded).update(`${K.timestamp}.${K.body}`).digest('hex');
    expect(K.signature).not.toBe(`sha256=${withDecodedKey}`);
  });

  it('the known-answer body is what buildEventBody produces for that event', () => {
    const body = buildEventBody({
      deliveryId: 42,
      event: 'document.approved',
      sequence: 4,
      createdAt: new Date('2026-11-22T09:41:00.000Z'),
      data: {
        document: {
          id: '0b9c6f8e-4a57-4c1e-9d8f-2f6a1c3e5b7d',
          reference: 'WQT-2026-000042',
          title_ar: 'عقد توريد',
          title_en: 'Supply contract',
          status: 'approved',
          download_url: 'https://wathiq.example/files/q3Xv9aJ0mC7tR2kLpW5yZg/WQT-2026-000042.pdf',
        },
      },
    });
    expect(body).toBe(K.body);
    expect(isoTime('2026-11-22T12:41:00.123+03:00')).toBe('2026-11-22T09:41:00+00:00');
    expect(() =>
      buildEventBody({
        deliveryId: 0,
        event: 'webhook.test',
        sequence: null,
        createdAt: new Date(),
        data: {},
      }),
    ).toThrow();
    expect(() =>
      buildEventBody({ deliveryId: 1, event: 'document.sent', sequence: 0, createdAt: new Date(), data: {} }),
    ).toThrow();
    expect(
      JSON.parse(
        buildEventBody({
          deliveryId: 1,
          event: 'webhook.test',
          sequence: null,
          createdAt: new Date(),
          data: {},
        }),
      ),
    ).toMatchObject({ id: 1, sequence: null });
  });

  it('generates whsec_ secrets of 32 random bytes in standard base64, and still knows base64url ones', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(Buffer.from(a.slice(6), 'base64').toString('base64')).toBe(a.slice(6));
    expect(a).not.toBe(b);
    expect(isWebhookSecret(a)).toBe(true);
    expect(isWebhookSecret(K.secret)).toBe(true);
    expect(isWebhookSecret('whsec_short')).toBe(false);
    expect(isWebhookSecret(`whsec_${'A'.repeat(43)}==`)).toBe(false);
    expect(isWebhookSecret(`whsec_${'+'.repeat(20)}${'-'.repeat(23)}`)).toBe(false);
  });
});

describe('Standard Webhooks signatures', () => {
  const id = '42';
  // Computed outside this code base, with Python's hmac and base64 modules over the known-answer body.
  const KNOWN_V1 = 'v1,PykkInTZmtVwFaQBgwPqPYyR1XH769nRFgxxjG2vEMU=';
  const KNOWN_STANDARD_SECRET = 'whsec_0XHmi2B8+Qwp0xXtcysLfog9LXRFDin1+qoU2rThctY=';

  it('matches the known answer for a base64url secret made before, keyed by its decoded 32 bytes', () => {
    expect(standardWebhookKey(K.secret)).toEqual(Buffer.from(K.secret.slice(6), 'base64url'));
    expect(standardWebhooksSecret(K.secret)).toBe(KNOWN_STANDARD_SECRET);
    expect(signStandardWebhook({ secret: K.secret, id, timestamp: K.timestamp, body: K.body })).toBe(
      KNOWN_V1,
    );
    expect(
      signStandardWebhook({ secret: KNOWN_STANDARD_SECRET, id, timestamp: K.timestamp, body: K.body }),
    ).toBe(KNOWN_V1);
  });

  it('is what the standardwebhooks package signs and verifies, for a secret made now', () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signStandardWebhook({ secret, id, timestamp, body: K.body });
    const wh = new Webhook(secret);
    expect(wh.sign(id, at(timestamp), K.body)).toBe(signature);
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    };
    expect(wh.verify(K.body, headers)).toMatchObject({ id: 42, event: 'document.approved' });
    expect(() => wh.verify(K.body, { ...headers, 'webhook-id': '43' })).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(K.body, headers)).toThrow();
  });

  it('refuses a secret that encodes no key', () => {
    expect(() => standardWebhookKey('whsec_')).toThrow(RangeError);
  });
});

describe('verifyWebhook', () => {
  const now = at(K.timestamp + 20);
  const good = {
    secret: K.secret,
    headers: { 'X-Wathiq-Timestamp': String(K.timestamp), 'X-Wathiq-Signature': K.signature },
    rawBody: Buffer.from(K.body, 'utf8'),
    now,
  };

  it('accepts the known-answer delivery, from Node headers, a Headers object, a string or bytes', () => {
    expect(verifyWebhook(good)).toEqual({ ok: true, timestamp: K.timestamp });
    expect(verifyWebhook({ ...good, rawBody: K.body }).ok).toBe(true);
    expect(verifyWebhook({ ...good, headers: new Headers(good.headers) }).ok).toBe(true);
    expect(
      verifyWebhook({
        ...good,
        headers: { 'x-wathiq-timestamp': String(K.timestamp), 'x-wathiq-signature': K.signature },
      }).ok,
    ).toBe(true);
  });

  it('refuses an altered body, even one that parses to the same JSON', () => {
    const reformatted = JSON.stringify(JSON.parse(K.body), null, 1);
    expect(verifyWebhook({ ...good, rawBody: reformatted })).toEqual({ ok: false, reason: 'bad_signature' });
    const tampered = Buffer.from(K.body.replace('"approved"', '"rejected"'), 'utf8');
    expect(verifyWebhook({ ...good, rawBody: tampered })).toEqual({ ok: false, reason: 'bad_signature' });
    // The same characters in another encoding are other bytes.
    expect(verifyWebhook({ ...good, rawBody: Buffer.from(K.body, 'utf16le') }).ok).toBe(false);
  });

  it('refuses the wrong secret and a signature moved to another timestamp', () => {
    expect(verifyWebhook({ ...good, secret: generateWebhookSecret() })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const headers = { ...good.headers, 'X-Wathiq-Timestamp': String(K.timestamp + 1) };
    expect(verifyWebhook({ ...good, headers })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a timestamp more than 300 s away in either direction, and honours a custom tolerance', () => {
    const body = '{"id":1}';
    const t = 1_800_000_000;
    const headers = signedHeaders(K.secret, t, body);
    const check = (nowSeconds: number, toleranceSeconds?: number) =>
      verifyWebhook({ secret: K.secret, headers, rawBody: body, now: at(nowSeconds), toleranceSeconds });
    expect(check(t + 300).ok).toBe(true);
    expect(check(t - 300).ok).toBe(true);
    expect(check(t + 301)).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(check(t - 301)).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(check(t + 3600, 7200).ok).toBe(true);
  });

  it('refuses missing, malformed, repeated or differently-cased signature headers', () => {
    const v = (headers: Record<string, string | string[]>) => verifyWebhook({ ...good, headers });
    expect(v({ 'x-wathiq-signature': K.signature })).toEqual({ ok: false, reason: 'missing_timestamp' });
    expect(v({ 'x-wathiq-timestamp': String(K.timestamp) })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    expect(v({ 'x-wathiq-timestamp': '1.7e9', 'x-wathiq-signature': K.signature })).toEqual({
      ok: false,
      reason: 'malformed_timestamp',
    });
    expect(
      v({ 'x-wathiq-timestamp': String(K.timestamp), 'x-wathiq-signature': K.signature.toUpperCase() }).ok,
    ).toBe(false);
    expect(
      v({ 'x-wathiq-timestamp': String(K.timestamp), 'x-wathiq-signature': K.signature.slice(7) }).ok,
    ).toBe(false);
    expect(
      v({ 'x-wathiq-timestamp': String(K.timestamp), 'x-wathiq-signature': [K.signature, 'sha256=00'] }).ok,
    ).toBe(false);
  });
});

describe('event catalogue', () => {
  it('lists the fifteen subscribable events with descriptions, no document.completed, webhook.test apart', () => {
    expect(SUBSCRIBABLE_EVENTS).toEqual([
      'document.created',
      'document.sent',
      'approver.notified',
      'approver.viewed',
      'approver.delegated',
      'approver.completed',
      'approver.rejected',
      'document.approved',
      'document.download_rotated',
      'document.rejected',
      'document.voided',
      'document.expired',
      'document.finalization_failed',
      'bulk_send.completed',
      'bulk_send.cancelled',
    ]);
    expect(EVENT_CATALOGUE.map((e) => e.event)).toEqual(SUBSCRIBABLE_EVENTS);
    for (const e of EVENT_CATALOGUE) expect(e.description.length).toBeGreaterThan(10);
    expect(EVENT_DESCRIPTIONS['webhook.test']).toBeTruthy();
    expect(isSubscribableEvent('webhook.test')).toBe(false);
    expect(isSubscribableEvent('document.completed')).toBe(false);
    expect(isSubscribableEvent('document.voided')).toBe(true);
  });
});
