import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import { startApiServer, type RunningApi } from '../../src/runtime/api-server.ts';
import { csrfFrom, FormClient } from '../helpers/dashboard.ts';
import {
  createDocument,
  linkTokenOf,
  nthMessageTo,
  PHONES,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * TRUST_PROXY is a number of proxy hops. The client address (ctx.ip) is what the approval page records on the
 * certificate and what the dashboard's sign-in throttle counts, so a client must not choose it with
 * X-Forwarded-For: with 0 hops the header is ignored, with N only the entry the outermost of our N proxies added
 * counts. Three servers share one service and database: the test service itself (0 hops), and 1 and 2 hops.
 */

let h: FlowHarness;
let direct: string;
let oneHop: RunningApi;
let twoHops: RunningApi;

const withHops = (hops: number): Config => ({
  ...h.service.config,
  http: { ...h.service.config.http, proxyHops: hops },
});

beforeAll(async () => {
  h = await startFlowHarness();
  direct = h.service.api.url;
  oneHop = await startApiServer({ ...h.service.deps, config: withHops(1) }, '127.0.0.1', 0);
  twoHops = await startApiServer({ ...h.service.deps, config: withHops(2) }, '127.0.0.1', 0);
});
afterAll(async () => {
  await oneHop?.stop();
  await twoHops?.stop();
  await h?.close();
});

/** One failed dashboard sign-in through `base`, with the given X-Forwarded-For (or none). */
async function failedSignIn(base: string, forwardedFor?: string): Promise<void> {
  const client = new FormClient(base);
  const token = csrfFrom(await (await client.get('/admin/login')).text());
  const res = await client.post(
    '/admin/login',
    { _csrf: token, email: `nobody-${randomBytes(4).toString('hex')}@example.test`, password: 'wrong' },
    { headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } },
  );
  expect(res.status).toBe(401);
}

/** The sign-in throttle's per-address counters, by address. */
async function addressFailures(): Promise<Map<string, number>> {
  const rows = await h.service.database
    .db('login_attempts')
    .where('bucket', 'like', 'ip:%')
    .select<{ bucket: string; failures: number }[]>('bucket', 'failures');
  return new Map(rows.map((r) => [r.bucket.slice('ip:'.length), r.failures]));
}

describe('the dashboard sign-in throttle counts the real client address', () => {
  it('with 0 hops, ignores X-Forwarded-For: a client cannot move to a fresh counter by inventing addresses', async () => {
    const before = (await addressFailures()).get('127.0.0.1') ?? 0;
    await failedSignIn(direct, '198.51.100.1');
    await failedSignIn(direct, '198.51.100.2, 198.51.100.3');
    const after = await addressFailures();
    expect(after.get('127.0.0.1')).toBe(before + 2);
    expect([...after.keys()].filter((a) => a.startsWith('198.51.100.'))).toEqual([]);
  });

  it('with 1 hop, counts only the last entry (the one our proxy added), whatever the client put before it', async () => {
    await failedSignIn(oneHop.url, '198.51.100.4, 203.0.113.5');
    await failedSignIn(oneHop.url, '198.51.100.5, 198.51.100.6, 203.0.113.5');
    const after = await addressFailures();
    expect(after.get('203.0.113.5')).toBe(2);
    expect([...after.keys()].filter((a) => a.startsWith('198.51.100.'))).toEqual([]);
  });

  it('with 2 hops, counts the entry the outer proxy added; without the header, the socket address', async () => {
    const before = (await addressFailures()).get('127.0.0.1') ?? 0;
    await failedSignIn(twoHops.url, '198.51.100.7, 203.0.113.6, 10.0.0.2');
    await failedSignIn(twoHops.url);
    const after = await addressFailures();
    expect(after.get('203.0.113.6')).toBe(1);
    expect(after.get('127.0.0.1')).toBe(before + 1);
    expect([...after.keys()].filter((a) => a.startsWith('198.51.100.') || a === '10.0.0.2')).toEqual([]);
  });
});

describe('the approval page records the real client address on the approver', () => {
  it('ignores a spoofed X-Forwarded-For with 0 hops and reads only the proxies’ entries with 1 or 2', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'Direct', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'One hop', phone: PHONES.saudiB, action_type: 'approve_only' },
        { name: 'Two hops', phone: PHONES.uk, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const cases = [
      {
        phone: PHONES.saudiA,
        base: direct,
        forwardedFor: '198.51.100.20',
        recorded: /^(::ffff:)?127\.0\.0\.1$/,
      },
      {
        phone: PHONES.saudiB,
        base: oneHop.url,
        forwardedFor: '198.51.100.21, 203.0.113.21',
        recorded: /^203\.0\.113\.21$/,
      },
      {
        phone: PHONES.uk,
        base: twoHops.url,
        forwardedFor: '198.51.100.22, 203.0.113.22, 10.0.0.3',
        recorded: /^203\.0\.113\.22$/,
      },
    ];
    for (const c of cases) {
      const token = linkTokenOf(await nthMessageTo(h, c.phone, 0));
      const res = await fetch(`${c.base}/a/${token}/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': c.forwardedFor },
        body: '{}',
      });
      expect(res.status, await res.text()).toBe(200);
      const approver = doc.approvers.find((a) => a.phone.endsWith(c.phone.slice(-9)))!;
      const row = await h.service.database
        .db('approvers')
        .where({ id: approver.id })
        .first<{ action_ip: string; action_channel: string }>();
      expect(row).toMatchObject({ action_channel: 'page' });
      expect(row.action_ip).toMatch(c.recorded);
    }
  });
});
