import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  nthMessageTo,
  pagePost,
  quickRepliesOf,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  type CreatedDocument,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * A whole document's life with every process logging into one array, at debug level: the API's request and error
 * lines, the worker's activities and its WhatsApp provider, the Temporal runtime. Tokens in paths (/a/, /v/,
 * /files/), button payloads and Meta's verify token never reach a line, and phone numbers reach one with at most
 * their last four digits.
 */
const SIGNER = '966501330001';
const BUTTON = '966551330002';
const STRANGER = '966561330003';
const CC = '447912330004';
const VERIFY_TOKEN = `verify-${randomBytes(12).toString('hex')}`;

const lines: string[] = [];
const all = () => lines.join('\n');
const requestLines = () =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.msg === 'request');

let h: FlowHarness;
let doc: CreatedDocument;
const secrets: string[] = [VERIFY_TOKEN];
beforeAll(async () => {
  const logger = createLogger({ logLevel: 'debug' }, {}, { write: (s: string) => void lines.push(s.trim()) });
  h = await startFlowHarness({ logger, env: { WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN } });
  doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [
      { name: 'Signer', phone: SIGNER, action_type: 'sign' },
      { name: 'Button', phone: BUTTON, action_type: 'approve_only' },
    ],
    fields: { 'cc[0][phone]': CC, 'cc[0][name]': 'Copy' },
  });
}, 120_000);
afterAll(() => h?.close());

const get = async (path: string) => {
  const res = await fetch(`${h.service.api.url}${path}`);
  await res.arrayBuffer();
  return res;
};

describe('logs of a full document cycle', () => {
  it('carry no token and no whole phone number', async () => {
    expect((await send(h, doc.id)).status).toBe(200);
    const signerToken = linkTokenOf(await nthMessageTo(h, SIGNER, 0));
    secrets.push(signerToken);
    expect((await get(`/a/${signerToken}`)).status).toBe(200);
    expect((await get(`/a/${signerToken}/document.pdf`)).status).toBe(200);
    expect((await pagePost(h, signerToken, 'complete', { typed_name: 'Signer' })).status).toBe(200);

    const request = await nthMessageTo(h, BUTTON, 0);
    secrets.push(linkTokenOf(request));
    const approve = quickRepliesOf(request).find((p) => p.startsWith('approve:'))!;
    // A reply from a number that is not the approver's: logged (with its number) and ignored.
    expect((await tapButton(h, { from: STRANGER, payload: approve })).status).toBe(200);
    // The signed copies go to the approvers, then to cc: WhatsApp refuses the cc copy naming the number.
    h.graph.scriptFor(CC, {
      kind: 'graph_error',
      status: 400,
      code: 131026,
      message: `Message undeliverable: +${CC} is not on WhatsApp`,
    });
    expect((await tapButton(h, { from: BUTTON, payload: approve })).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 120_000);
    await eventually(() => lines.some((l) => l.includes('WhatsApp refused a signed copy')), 60_000);

    const got = (await (await h.service.request(`/documents/${doc.id}`, { account: h.account })).json()) as {
      data: { verification_url: string };
    };
    const verification = new URL(got.data.verification_url).pathname;
    secrets.push(verification.split('/').pop()!);
    expect((await get(verification)).status).toBe(200);
    const download = (await (
      await h.service.request(`/documents/${doc.id}/download`, { account: h.account })
    ).json()) as { data: { download_url: string } };
    const file = new URL(download.data.download_url).pathname;
    secrets.push(file.split('/')[2]!);
    expect((await get(file)).status).toBe(200);
    const handshake = `/api/v1/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=73`;
    expect((await get(handshake)).status).toBe(200);

    // Every one of those requests left its line, and the lines said who and what, masked.
    const urls = requestLines().map((e) => e.url as string);
    for (const url of ['/a/[redacted]', '/a/[redacted]/document.pdf', '/v/[redacted]', '/files/[redacted]/'])
      expect(
        urls.some((u) => u.startsWith(url)),
        url,
      ).toBe(true);
    expect(urls).toContain(
      '/api/v1/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=[redacted]&hub.challenge=73',
    );
    expect(all()).toContain('***0003'); // the stranger's reply
    expect(all()).toContain('***0004'); // the refused cc copy

    for (const secret of secrets) expect(all()).not.toContain(secret);
    for (const phone of [SIGNER, BUTTON, STRANGER, CC]) {
      expect(all()).not.toContain(phone);
      expect(all()).not.toContain(phone.slice(3)); // the national number
    }
  }, 240_000);
});
