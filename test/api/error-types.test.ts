import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../src/api/schemas/envelopes.ts';
import {
  createDocument,
  PHONES,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * `error.type` from real requests: each cause a client may meet on the API, one request each, the body checked
 * against the documented (strict) error schema. The five 409s of a document's life differ by type alone.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
});
afterAll(() => h.close());

async function typeOf(res: Response, status: number): Promise<string> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = ErrorEnvelope.parse(JSON.parse(text));
  expect(body.error.code).toBe(status);
  return body.error.type;
}

const draft = () =>
  createDocument(h, {
    workflowType: 'sequential',
    approvers: [{ name: 'Ali', phone: PHONES.saudiA, action_type: 'approve_only' }],
  });

const api = (path: string, init: RequestInit = {}) =>
  h.service.request(path, { account: h.account, ...init });
const jsonPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  api(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('error.type names the cause', () => {
  it('authentication, scope, routing and bodies', async () => {
    expect(await typeOf(await h.service.request('/documents'), 401)).toBe('unauthorized');
    const readOnly = await h.service.createAccount({ scopes: ['documents:read'] });
    expect(await typeOf(await h.service.request('/webhooks', { account: readOnly }), 403)).toBe('forbidden');
    expect(await typeOf(await api(`/documents/${randomUUID()}`), 404)).toBe('not_found');
    expect(
      await typeOf(
        await api('/webhooks', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"url":',
        }),
        400,
      ),
    ).toBe('malformed_json');
    expect(
      await typeOf(
        await api('/webhooks', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }),
        415,
      ),
    ).toBe('unsupported_media_type');
    expect(await typeOf(await jsonPost('/webhooks', { url: 'not a url', events: [] }), 422)).toBe(
      'validation_failed',
    );
  });

  it('the five 409s of a document and its Idempotency-Key differ', async () => {
    const sent = await draft();
    expect((await send(h, sent.id)).status).toBe(200);
    expect(await typeOf(await send(h, sent.id), 409)).toBe('already_sent');
    const update = api(`/documents/${sent.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Renamed' }),
    });
    expect(await typeOf(await update, 409)).toBe('not_a_draft');

    const expired = await draft();
    await h.service.database
      .db('documents')
      .where({ id: expired.id })
      .update({ expires_at: new Date(Date.now() - 60_000) });
    expect(await typeOf(await send(h, expired.id), 409)).toBe('document_expired');

    const full = await createDocument(h, {
      workflowType: 'parallel',
      approvers: Array.from({ length: 50 }, (_, i) => ({
        name: `A${i}`,
        phone: PHONES.saudiA,
        action_type: 'approve_only' as const,
      })),
    });
    const extra = { name: 'Extra', phone: PHONES.saudiB, action_type: 'approve_only' };
    expect(await typeOf(await jsonPost(`/documents/${full.id}/approvers`, extra), 409)).toBe(
      'too_many_approvers',
    );

    const key = randomUUID();
    const open = await draft();
    const first = { name: 'B', phone: PHONES.saudiB, action_type: 'approve_only' };
    expect(
      (await jsonPost(`/documents/${open.id}/approvers`, first, { 'Idempotency-Key': key })).status,
    ).toBe(201);
    const other = { ...first, name: 'C' };
    expect(
      await typeOf(await jsonPost(`/documents/${open.id}/approvers`, other, { 'Idempotency-Key': key }), 422),
    ).toBe('idempotency_key_reused');
  });
});
