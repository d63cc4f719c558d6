import { Writable } from 'node:stream';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { acceptRequestId, documentIdOfPath } from '../../src/api/middleware/request-id.ts';
import { addToLogContext, createLogger, redactTokens, withLogContext } from '../../src/logger.ts';
import { redactPhones } from '../../src/domain/log-redaction.ts';
import { createConsoleProvider } from '../../src/whatsapp/console-provider.ts';
import { notice, templates } from '../helpers/whatsapp-fixtures.ts';

const TOKEN = 'Zk3v9Q_x-2mW8pLrT5yH0aBcDeFgHiJkLmNoPqRsTuV';
const DOCUMENT = '0b6f3a52-8a1e-4c7d-9f10-2d3e4f5a6b7c';

/** Our logger, writing into an array the test reads. */
function captured() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ logLevel: 'info' }, {}, { write: (s: string) => sink.write(s) });
  return { logger, lines, entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('redactTokens', () => {
  it.each([
    [`/a/${TOKEN}`, '/a/[redacted]'],
    [`/a/${TOKEN}/complete`, '/a/[redacted]/complete'],
    [`/a/${TOKEN}/document.pdf?x=1`, '/a/[redacted]/document.pdf?x=1'],
    [`/files/${TOKEN}/WQT-2026-000042.pdf`, '/files/[redacted]/WQT-2026-000042.pdf'],
    [`https://wathiq.example/a/${TOKEN}`, 'https://wathiq.example/a/[redacted]'],
    [
      `open https://wathiq.example/a/${TOKEN} or /files/${TOKEN}/x.pdf`,
      'open https://wathiq.example/a/[redacted] or /files/[redacted]/x.pdf',
    ],
    [`{"url":"/a/${TOKEN}"}`, '{"url":"/a/[redacted]"}'],
    [`/v/${TOKEN}`, '/v/[redacted]'],
    [`/v/${TOKEN}/check`, '/v/[redacted]/check'],
    [`https://wathiq.example/v/${TOKEN}?lang=en`, 'https://wathiq.example/v/[redacted]?lang=en'],
    [
      `/api/v1/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${TOKEN}&hub.challenge=42`,
      '/api/v1/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=[redacted]&hub.challenge=42',
    ],
    [`?hub%2Everify_token=${TOKEN}`, '?hub%2Everify_token=[redacted]'],
    [`{"payload":"approve:${TOKEN}"}`, '{"payload":"approve:[redacted]"}'],
    [`review:${TOKEN} reject:${TOKEN}`, 'review:[redacted] reject:[redacted]'],
    [`{"url":"/x?HUB.VERIFY_TOKEN=${TOKEN}"}`, '{"url":"/x?HUB.VERIFY_TOKEN=[redacted]"}'],
  ])('%s', (given, expected) => {
    expect(redactTokens(given)).toBe(expected);
    expect(redactTokens(given)).not.toContain(TOKEN);
  });

  it.each([
    '/a/assets/approval.js',
    '/a/assets/standard_fonts/FoxitSans.pfb',
    '/v/assets/verify.js',
    '/api/v1/webhooks/whatsapp?hub.mode=subscribe&hub.challenge=42',
    '/api/v1/documents/0b6f3a52-8a1e-4c7d-9f10-2d3e4f5a6b7c',
    '/admin/documents',
    'no paths here',
  ])('leaves %s alone', (text) => {
    expect(redactTokens(text)).toBe(text);
  });
});

describe('redactPhones', () => {
  it.each([
    ['966501234567', '***4567'],
    ['+966501234567', '***4567'],
    ['00966501234567', '***4567'],
    ['+966 50 123 4567', '***4567'],
    ['+44-7911-123456', '***3456'],
    ['447911123456', '***3456'],
    ['{"to":"966501234567","from":"+447911123456"}', '{"to":"***4567","from":"***3456"}'],
    ['refused +966501234567 (code 131026)', 'refused ***4567 (code 131026)'],
    ['wa.me/966501234567?text=x', 'wa.me/***4567?text=x'],
  ])('%s', (given, expected) => {
    expect(redactPhones(given)).toBe(expected);
  });

  it.each([
    '{"level":30,"time":1795000000000,"pid":4242}',
    '"duration_ms":12345678.5',
    'uploaded 20971520 bytes',
    'X-Wathiq-Timestamp: 1795000000',
    '9f0c2b1e-6d4a-4a8e-b1f3-096650123456',
    'WQT-2026-000042',
    'wamid.HBgMOTY2NTAxMjM0NTY3FQIAERgS',
    'delivery 123456789',
    '2026-11-22T09:41:00+00:00',
    'code 123456',
  ])('leaves %s alone', (text) => {
    expect(redactPhones(text)).toBe(text);
  });
});

describe('acceptRequestId', () => {
  it.each(['abc', 'req-1', 'a.b_c:d-e', '9f0c2b1e-6d4a-4a8e-b1f3-0c9d8e7f6a5b', 'x'.repeat(128)])(
    'keeps a sane id: %s',
    (id) => {
      expect(acceptRequestId(id)).toBe(id);
    },
  );

  it.each([
    [''],
    ['x'.repeat(129)],
    ['has space'],
    ['line\nbreak'],
    ['quote"'],
    ['<script>'],
    ['ümlaut'],
    [undefined],
  ])('replaces %j with a new UUID', (given) => {
    const id = acceptRequestId(given);
    expect(id).not.toBe(given);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});

describe('documentIdOfPath', () => {
  it('reads the document of /api/v1/documents/{id}…, nothing else', () => {
    expect(documentIdOfPath(`/api/v1/documents/${DOCUMENT}`)).toBe(DOCUMENT);
    expect(documentIdOfPath(`/api/v1/documents/${DOCUMENT}/send`)).toBe(DOCUMENT);
    expect(documentIdOfPath(`/api/v1/documents/${DOCUMENT.toUpperCase()}/status`)).toBe(DOCUMENT);
    expect(documentIdOfPath('/api/v1/documents')).toBeUndefined();
    expect(documentIdOfPath('/api/v1/documents/not-a-uuid')).toBeUndefined();
    expect(documentIdOfPath(`/api/v1/approvers/${DOCUMENT}`)).toBeUndefined();
  });
});

describe('createLogger', () => {
  it('redacts path tokens in messages, fields and error stacks', () => {
    const { logger, lines } = captured();
    const err = new Error(`fetch https://wathiq.example/files/${TOKEN}/x.pdf failed`);
    logger.error(
      { err, url: `/a/${TOKEN}/complete`, nested: { link: `/a/${TOKEN}` } },
      `page /a/${TOKEN} failed`,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(TOKEN);
    expect(lines[0]).toContain('/a/[redacted]/complete');
    expect(lines[0]).toContain('/files/[redacted]/x.pdf');
  });

  it('keeps at most the last four digits of a phone number, and no verify token', () => {
    const { logger, lines } = captured();
    logger.warn(
      { from: '966501234567', err: new Error('to +966 50 123 4567 failed') },
      'reply from 447911123456',
    );
    logger.info({ url: `/api/v1/webhooks/whatsapp?hub.verify_token=${TOKEN}&hub.challenge=7` }, 'request');
    expect(lines.join('\n')).not.toMatch(/501234567|50 123|7911123|791112/);
    expect(lines.join('\n')).not.toContain(TOKEN);
    expect(lines[0]).toContain('"from":"***4567"');
    expect(lines[0]).toContain('reply from ***3456');
  });

  it("keeps the console WhatsApp provider's messages without the number or the link's token", async () => {
    const { logger, lines } = captured();
    const provider = createConsoleProvider({ logger, templates, publicBaseUrl: 'https://wathiq.example' });
    await provider.send(notice({ phone: '966501234567', linkToken: TOKEN, actionType: 'approve_only' }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('501234567');
    expect(lines[0]).not.toContain(TOKEN);
    expect(lines[0]).toContain('"to":"***4567"');
  });

  it('adds request_id and document_id to every line written inside a request', async () => {
    const { logger, entries } = captured();
    logger.info('before');
    await withLogContext({ request_id: 'req-1' }, async () => {
      logger.info('start');
      await new Promise((resolve) => setImmediate(resolve));
      addToLogContext({ document_id: DOCUMENT });
      logger.child({ part: 'x' }).warn('found the document');
    });
    logger.info('after');
    const [before, start, found, after] = entries();
    expect(before).not.toHaveProperty('request_id');
    expect(start).toMatchObject({ request_id: 'req-1', msg: 'start' });
    expect(start).not.toHaveProperty('document_id');
    expect(found).toMatchObject({ request_id: 'req-1', document_id: DOCUMENT, part: 'x' });
    expect(after).not.toHaveProperty('request_id');
  });

  it('adds workflow_id and document_id to lines written inside an activity', async () => {
    const { logger, entries } = captured();
    const env = new MockActivityEnvironment({
      activityType: 'notifyApprover',
      workflowExecution: { workflowId: `document-${DOCUMENT}`, runId: 'run-1' },
    });
    await env.run(async () => {
      await Promise.resolve();
      logger.info('in the activity');
    });
    const other = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'webhook-delivery-1', runId: 'run-2' },
    });
    await other.run(async () => {
      await Promise.resolve();
      logger.info('in another workflow');
    });
    logger.info('outside');
    const [inside, elsewhere, outside] = entries();
    expect(inside).toMatchObject({
      workflow_id: `document-${DOCUMENT}`,
      document_id: DOCUMENT,
      activity_type: 'notifyApprover',
    });
    expect(elsewhere).toMatchObject({ workflow_id: 'webhook-delivery-1' });
    expect(elsewhere).not.toHaveProperty('document_id');
    expect(outside).not.toHaveProperty('workflow_id');
  });
});
