import { sha256Hex } from '../../src/auth/tokens.ts';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createDocument,
  otpCodesTo,
  PHONES,
  startFlowHarness,
  type ApproverSpec,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * A one-time code WhatsApp did not take (the Graph API answers 5xx, the page 502) does not count against the
 * approver's resend limits (OTP_RESEND_SECONDS, OTP_MAX_SENDS_PER_HOUR). No worker: the link is given to the
 * approver row directly, as the send would.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({
    worker: false,
    env: { OTP_IP_PER_MINUTE: '1000', OTP_RESEND_SECONDS: '60', OTP_MAX_SENDS_PER_HOUR: '2' },
  });
});
afterAll(() => h.close());

interface OtpRow {
  last_sent_at: Date | null;
  sends_in_window: number;
}

it('answers 502 when the Graph API fails, and the failed sends leave the resend limits as they were', async () => {
  const approver: ApproverSpec & { verification: 'whatsapp_otp' } = {
    name: 'Unlucky Approver',
    phone: PHONES.saudiB,
    action_type: 'approve_only',
    verification: 'whatsapp_otp',
  };
  const doc = await createDocument(h, { workflowType: 'sequential', approvers: [approver] });
  const approverId = doc.approvers[0]!.id;
  const token = randomBytes(32).toString('base64url');
  await h.service.database.db('documents').where({ id: doc.id }).update({ status: 'pending' });
  await h.service.database
    .db('approvers')
    .where({ id: approverId })
    .update({ link_token_sha256: sha256Hex(token) });
  const askCode = async () => {
    const res = await fetch(`${h.service.api.url}/a/${token}/code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    return { status: res.status, body: (await res.json()) as { error?: { message: string } } };
  };
  const row = () =>
    h.service.database
      .db('approver_otp_codes')
      .where({ approver_id: approverId })
      .first<OtpRow>('last_sent_at', 'sends_in_window');

  // Three failures in a row, more than OTP_MAX_SENDS_PER_HOUR and within OTP_RESEND_SECONDS of each other.
  h.graph.scriptFor(
    PHONES.saudiB,
    { kind: 'graph_error', status: 500, code: 1, message: 'An unknown error occurred' },
    { kind: 'graph_error', status: 503, code: 2, message: 'Service temporarily unavailable' },
    { kind: 'raw', status: 502, body: '<html>Bad Gateway</html>' },
  );
  for (let i = 0; i < 3; i++) {
    const failed = await askCode();
    expect(failed.status, JSON.stringify(failed.body)).toBe(502);
    expect(failed.body.error!.message).toMatch(/could not be sent over WhatsApp/);
  }
  expect(await row()).toMatchObject({ last_sent_at: null, sends_in_window: 0 });
  expect(otpCodesTo(h, PHONES.saudiB)).toHaveLength(3); // tried each time: WhatsApp refused each

  // The next attempt goes through at once, and counts.
  const sent = await askCode();
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  expect(await row()).toMatchObject({ sends_in_window: 1 });
  expect((await row()).last_sent_at).not.toBeNull();

  // A failure after a success leaves that success's counting, not its own.
  const before = await row();
  const earlier = new Date(Date.now() - 61_000);
  await h.service.database
    .db('approver_otp_codes')
    .where({ approver_id: approverId })
    .update({ last_sent_at: earlier });
  h.graph.scriptFor(PHONES.saudiB, { kind: 'graph_error', status: 500, code: 1 });
  expect((await askCode()).status).toBe(502);
  const after = await row();
  expect(after.sends_in_window).toBe(before.sends_in_window);
  expect(after.last_sent_at!.getTime()).toBe(earlier.getTime());
  // The second code of the hour can still be sent; a third is refused by the hourly limit.
  expect((await askCode()).status).toBe(200);
  await h.service.database
    .db('approver_otp_codes')
    .where({ approver_id: approverId })
    .update({ last_sent_at: new Date(Date.now() - 61_000) });
  const third = await askCode();
  expect(third.status).toBe(429);
  expect(third.body.error!.message).toMatch(/At most 2 codes an hour/);
});
