import { sha256Hex } from '../../src/auth/tokens.ts';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createDocument,
  PHONES,
  startFlowHarness,
  type ApproverSpec,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * Guessing across approvers from one address: OTP_IP_PER_MINUTE code requests per client address and minute. No
 * worker: the link is given to the approver row directly, as the send would.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({ worker: false, env: { OTP_IP_PER_MINUTE: '3' } });
});
afterAll(() => h.close());

it('answers 429 with Retry-After past OTP_IP_PER_MINUTE code requests from one address', async () => {
  const approver: ApproverSpec & { verification: 'whatsapp_otp' } = {
    name: 'Verified Approver',
    phone: PHONES.saudiA,
    action_type: 'approve_only',
    verification: 'whatsapp_otp',
  };
  const doc = await createDocument(h, { workflowType: 'sequential', approvers: [approver] });
  const token = randomBytes(32).toString('base64url');
  await h.service.database.db('documents').where({ id: doc.id }).update({ status: 'pending' });
  await h.service.database
    .db('approvers')
    .where({ document_id: doc.id })
    .update({ link_token_sha256: sha256Hex(token) });
  const verify = () =>
    fetch(`${h.service.api.url}/a/${token}/code/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: '123456' }),
    });
  // No code was sent: 409 each time, until the address is over its limit. The window is a fixed minute, so one
  // boundary may fall between the requests: by the seventh, at most 3 + 3 have been let through.
  const statuses: number[] = [];
  let limited: Response | undefined;
  while (!limited && statuses.length < 7) {
    const res = await verify();
    statuses.push(res.status);
    if (res.status === 429) limited = res;
  }
  expect(statuses.slice(0, -1).every((s) => s === 409)).toBe(true);
  expect(statuses.length).toBeGreaterThanOrEqual(4);
  expect(limited?.status).toBe(429);
  if (!limited) return;
  expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(((await limited.json()) as { error: { message: string } }).error.message).toMatch(/3 code requests/);
});
