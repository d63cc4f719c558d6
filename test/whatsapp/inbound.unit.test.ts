import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  parseButtonPayload,
  parseNotification,
  verifyHandshake,
  verifyMetaSignature,
} from '../../src/whatsapp/inbound.ts';
import {
  buttonReplyNotification,
  interactiveReplyNotification,
  newWamid,
  signedNotification,
  statusNotification,
  textMessageNotification,
} from '../fakes/fake-graph-api.ts';
import { newToken } from '../helpers/whatsapp-fixtures.ts';

const secret = 'app-secret-for-tests';

describe('verifyMetaSignature', () => {
  const payload = buttonReplyNotification({ from: '966500000001', payload: `approve:${newToken()}` });
  const signed = signedNotification(payload, secret);

  it('accepts the signature Meta computes over the raw bytes', () => {
    expect(verifyMetaSignature(signed.body, signed.headers['x-hub-signature-256'], secret)).toBe(true);
    const upper = `sha256=${createHmac('sha256', secret).update(signed.body).digest('hex').toUpperCase()}`;
    expect(verifyMetaSignature(signed.body, upper, secret)).toBe(true);
  });

  it('refuses another secret, a missing or malformed header, and an empty secret', () => {
    const header = signed.headers['x-hub-signature-256'];
    expect(verifyMetaSignature(signed.body, header, 'another-secret')).toBe(false);
    expect(verifyMetaSignature(signed.body, undefined, secret)).toBe(false);
    expect(verifyMetaSignature(signed.body, '', secret)).toBe(false);
    expect(verifyMetaSignature(signed.body, header.replace('sha256=', 'sha1='), secret)).toBe(false);
    expect(verifyMetaSignature(signed.body, header.slice(0, -2), secret)).toBe(false);
    expect(verifyMetaSignature(signed.body, 'sha256=' + 'zz'.repeat(32), secret)).toBe(false);
    expect(verifyMetaSignature(signed.body, header, '')).toBe(false);
  });

  it('refuses a body altered by one byte', () => {
    const header = signed.headers['x-hub-signature-256'];
    for (const at of [0, Math.floor(signed.body.length / 2), signed.body.length - 1]) {
      const altered = Buffer.from(signed.body);
      altered[at] = altered[at]! ^ 0x01;
      expect(verifyMetaSignature(altered, header, secret)).toBe(false);
    }
    expect(verifyMetaSignature(Buffer.concat([signed.body, Buffer.from(' ')]), header, secret)).toBe(false);
    // Re-serializing the parsed JSON with different spacing changes the bytes, and so the signature.
    const reformatted = Buffer.from(JSON.stringify(payload, null, 2));
    expect(verifyMetaSignature(reformatted, header, secret)).toBe(false);
  });
});

describe('verifyHandshake', () => {
  const query = { 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-me', 'hub.challenge': '1158201444' };

  it('echoes the challenge when mode and token match', () => {
    expect(verifyHandshake(query, 'verify-me')).toBe('1158201444');
  });

  it('refuses a wrong token, another mode, a missing challenge, repeated values and no configured token', () => {
    expect(verifyHandshake(query, 'verify-you')).toBeUndefined();
    expect(verifyHandshake({ ...query, 'hub.mode': 'unsubscribe' }, 'verify-me')).toBeUndefined();
    expect(verifyHandshake({ ...query, 'hub.challenge': undefined }, 'verify-me')).toBeUndefined();
    expect(
      verifyHandshake({ ...query, 'hub.verify_token': ['verify-me', 'x'] }, 'verify-me'),
    ).toBeUndefined();
    expect(verifyHandshake({ ...query, 'hub.challenge': '<script>' }, 'verify-me')).toBeUndefined();
    expect(verifyHandshake(query, undefined)).toBeUndefined();
    expect(verifyHandshake({}, 'verify-me')).toBeUndefined();
  });
});

describe('parseButtonPayload', () => {
  const token = newToken();
  it('reads approve, review and reject payloads', () => {
    expect(parseButtonPayload(`approve:${token}`)).toEqual({ action: 'approve', token });
    expect(parseButtonPayload(`review:${token}`)).toEqual({ action: 'review', token });
    expect(parseButtonPayload(`reject:${token}`)).toEqual({ action: 'reject', token });
  });

  it.each([
    undefined,
    null,
    '',
    'approve',
    'approve:',
    `accept:${token}`,
    `approve:${token}:x`,
    'approve:short',
    `Approve:${token}`,
    `approve: ${token}`,
  ])('refuses %j', (value) => {
    expect(parseButtonPayload(value)).toBeUndefined();
  });
});

describe('parseNotification', () => {
  it('reads a template quick-reply tap (messages[].button.payload)', () => {
    const wamid = newWamid();
    const contextWamid = newWamid();
    const at = new Date('2026-11-22T09:41:00Z');
    const parsed = parseNotification(
      buttonReplyNotification({
        from: '966500000001',
        payload: 'approve:abcdefghijklmnopqrstuv',
        text: 'Approve',
        wamid,
        contextWamid,
        timestamp: at,
        phoneNumberId: '123456',
      }),
    );
    expect(parsed).toEqual({
      replies: [
        {
          wamid,
          from: '966500000001',
          waId: '966500000001',
          timestamp: at,
          payload: 'approve:abcdefghijklmnopqrstuv',
          source: 'button',
          contextWamid,
          phoneNumberId: '123456',
        },
      ],
      statuses: [],
      ignored: 0,
    });
  });

  it('reads an interactive reply tap (messages[].interactive.button_reply.id) and drops a leading +', () => {
    const parsed = parseNotification(
      interactiveReplyNotification({ from: '+447700900123', id: 'reject:tok' }),
    );
    expect(parsed.replies).toHaveLength(1);
    expect(parsed.replies[0]).toMatchObject({
      from: '447700900123',
      payload: 'reject:tok',
      source: 'interactive',
    });
  });

  it('ignores text messages and other types', () => {
    const parsed = parseNotification(textMessageNotification({ from: '966500000001', text: 'approve' }));
    expect(parsed).toEqual({ replies: [], statuses: [], ignored: 1 });
  });

  it('reads sent, delivered, read and failed statuses with their errors', () => {
    const wamid = newWamid();
    const at = new Date('2026-11-22T09:41:05Z');
    for (const status of ['sent', 'delivered', 'read'] as const) {
      const parsed = parseNotification(
        statusNotification({ wamid, status, recipient: '966500000001', timestamp: at }),
      );
      expect(parsed.statuses).toEqual([
        { wamid, status, timestamp: at, recipient: '966500000001', errors: [] },
      ]);
    }
    const failed = parseNotification(
      statusNotification({ wamid, status: 'failed', recipient: '966500000001' }),
    );
    expect(failed.statuses[0]).toMatchObject({
      status: 'failed',
      errors: [
        {
          code: 131026,
          title: 'Message undeliverable',
          message: 'Message undeliverable',
          details: 'Message Undeliverable.',
        },
      ],
    });
  });

  it('keeps going past one malformed item and tolerates fields it does not know', () => {
    const payload = statusNotification({ wamid: newWamid(), status: 'delivered', recipient: '966500000001' });
    const value = payload.entry[0]!.changes[0]!.value as unknown as {
      statuses: unknown[];
      future_field?: unknown;
    };
    value.statuses.unshift({ id: 'x', status: 'deleted', timestamp: '1' }, { nonsense: true });
    value.future_field = { anything: 1 };
    const parsed = parseNotification(payload);
    expect(parsed.statuses).toHaveLength(1);
    expect(parsed.ignored).toBe(2);
  });

  it('reads several entries and changes in one notification', () => {
    const a = buttonReplyNotification({ from: '966500000001', payload: 'approve:aaaaaaaaaaaaaaaaaaaa' });
    const b = statusNotification({ wamid: newWamid(), status: 'read', recipient: '966500000002' });
    const both = { object: 'whatsapp_business_account', entry: [...a.entry, ...b.entry] };
    const parsed = parseNotification(both);
    expect(parsed.replies).toHaveLength(1);
    expect(parsed.statuses).toHaveLength(1);
  });

  it('reads the sender’s wa_id and business-scoped user id from contacts[]', () => {
    const parsed = parseNotification(
      buttonReplyNotification({
        from: '966500000001',
        userId: 'SA.1502576394655843',
        username: 'sara',
        payload: 'approve:abcdefghijklmnopqrstuv',
      }),
    );
    expect(parsed.replies[0]).toMatchObject({
      from: '966500000001',
      waId: '966500000001',
      userId: 'SA.1502576394655843',
    });
    const parent = parseNotification(
      buttonReplyNotification({ from: '966500000001', userId: 'US.ENT.11815799212886844830', payload: 'x' }),
    );
    expect(parent.replies[0]?.userId).toBe('US.ENT.11815799212886844830');
  });

  it('reads a reply without the phone number (a username user): only the business-scoped id names the sender', () => {
    const parsed = parseNotification(
      buttonReplyNotification({ userId: 'SA.1502576394655843', payload: 'approve:abcdefghijklmnopqrstuv' }),
    );
    expect(parsed.ignored).toBe(0);
    expect(parsed.replies).toHaveLength(1);
    expect(parsed.replies[0]).not.toHaveProperty('from');
    expect(parsed.replies[0]).not.toHaveProperty('waId');
    expect(parsed.replies[0]).toMatchObject({ userId: 'SA.1502576394655843' });
  });

  it('drops ids outside their bounds and charset, and ignores a reply that then names no sender', () => {
    const hostile = [
      'sa.1502576394655843', // country code in lower case
      'SAU.1502576394655843',
      'SA.',
      `SA.${'1'.repeat(129)}`,
      'SA.15025-76394655843',
      'SA.1502576394655843\n',
      "SA.1' OR '1'='1",
      'SA.١٥٠٢٥٧٦', // Arabic-Indic digits
    ];
    for (const userId of hostile) {
      const withPhone = parseNotification(
        buttonReplyNotification({ from: '966500000001', userId, payload: 'approve:abcdefghijklmnopqrstuv' }),
      );
      expect(withPhone.replies[0]?.from).toBe('966500000001');
      expect(withPhone.replies[0]).not.toHaveProperty('userId');
      const alone = parseNotification(
        buttonReplyNotification({ userId, payload: 'approve:abcdefghijklmnopqrstuv' }),
      );
      expect(alone, userId).toEqual({ replies: [], statuses: [], ignored: 1 });
    }
    expect(
      parseNotification(buttonReplyNotification({ userId: `SA.${'1'.repeat(128)}`, payload: 'x' })).replies,
    ).toHaveLength(1);
    for (const waId of ['1234', '1'.repeat(21), '9665O0000001', '+966500000001']) {
      const parsed = parseNotification(
        buttonReplyNotification({ waId, payload: 'approve:abcdefghijklmnopqrstuv' }),
      );
      expect(parsed.replies, waId).toEqual([]);
    }
    // Contacts that are not objects, or hold ids of the wrong type, are no identity.
    const odd = buttonReplyNotification({ userId: 'SA.1502576394655843', payload: 'x' });
    (odd.entry[0]!.changes[0]!.value as unknown as { contacts: unknown[] }).contacts = [
      { wa_id: 966500000001, user_id: ['SA.1'] },
    ];
    expect(parseNotification(odd).replies).toEqual([]);
  });

  it('with several contacts and no number, takes none of them as the sender', () => {
    const payload = buttonReplyNotification({ userId: 'SA.1502576394655843', payload: 'x' });
    const value = payload.entry[0]!.changes[0]!.value as unknown as { contacts: unknown[] };
    value.contacts.push({ profile: { name: 'Other' }, user_id: 'SA.999999' });
    expect(parseNotification(payload).replies).toEqual([]);
  });

  it('yields nothing for a body that is not a WhatsApp notification', () => {
    for (const body of [
      null,
      'text',
      42,
      {},
      { object: 'page', entry: [] },
      { object: 'whatsapp_business_account' },
    ]) {
      expect(parseNotification(body)).toEqual({ replies: [], statuses: [], ignored: 1 });
    }
  });
});
