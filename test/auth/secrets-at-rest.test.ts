import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { sha256Hex } from '../../src/auth/tokens.ts';
import { totpSecretContext } from '../../src/db/sealed-columns.ts';
import { SUBSCRIBABLE_EVENTS } from '../../src/features/webhooks/events.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  pagePost,
  PHONES,
  quickRepliesOf,
  requestFor,
  send,
  statusOf,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { CLI_SCRIPT } from '../helpers/entry-points.ts';
import { dumpDatabase } from '../helpers/pg-dump.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { startTestService, type TestAccount } from '../helpers/test-service.ts';

/**
 * No bearer secret at rest, end to end: a whole document flow (webhook, send, a WhatsApp reply, a page signature,
 * approval, download, a replaced download URL, deliveries) leaves none of the tokens or secrets it handed out in a
 * pg_dump of the database; then the encryption key is rotated (k1 → k2,k1 → secrets:reseal → k2) and every one of
 * them still works.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
const keysText = (keys: (typeof k1)[]) => keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');

let database: TestDatabase;
let graph: FakeGraphApi;
let receiver: WebhookReceiver;
let h: FlowHarness;
let account: TestAccount;
const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;

/** The service on the shared database with these encryption keys (the Cloud API provider on the fake Graph API). */
async function serviceWith(keys: (typeof k1)[]): Promise<FlowHarness> {
  const service = await startTestService({
    database,
    env: {
      ENCRYPTION_KEYS: keysText(keys),
      WHATSAPP_PROVIDER: 'cloud',
      WHATSAPP_API_URL: graph.apiUrl,
      WHATSAPP_PHONE_NUMBER_ID: graph.phoneNumberId,
      WHATSAPP_ACCESS_TOKEN: graph.accessToken,
      WHATSAPP_APP_SECRET: appSecret,
      WHATSAPP_VERIFY_TOKEN: 'verify-me',
    },
  });
  account ??= await service.createAccount({ plan: 'enterprise' });
  return { service, account, graph, appSecret, close: () => service.close() };
}

interface Json {
  success: boolean;
  data?: Record<string, unknown>;
  error?: { code: number; message: string };
}
async function call(path: string, init: RequestInit & { as?: TestAccount } = {}) {
  const { as, ...rest } = init;
  const res = await h.service.request(path, { account: as ?? account, ...rest });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}
/** A URL the service handed out (under PUBLIC_BASE_URL), fetched at the running service. */
const fetchHandedOut = (url: string, init?: RequestInit) =>
  fetch(`${h.service.api.url}${new URL(url).pathname}`, init);
/** The token of `/a/{token}`, `/files/{token}/…` or `/v/{token}`. */
const tokenIn = (url: string) => new URL(url).pathname.split('/')[2]!;

/** `npm run cli -- <args>` as an operator runs it, on this database with these keys; its JSON output. */
async function cli(args: string[], keys: (typeof k1)[]) {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI_SCRIPT, ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: inject('dataDir'),
      DATABASE_URL: database.url,
      ENCRYPTION_KEYS: keysText(keys),
    },
  });
  return { json: JSON.parse(stdout) as Record<string, unknown>, stderr };
}

/** Everything the flow handed out, to look for in the dump and to use again after the rotation. */
const handed: Record<string, string> = {};
let documentId: string;
let signerId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  graph = await startFakeGraphApi();
  receiver = await startWebhookReceiver();
  h = await serviceWith([k1]);
}, 120_000);

afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await graph?.close();
  await database?.drop();
});

describe('secrets at rest', () => {
  it('a full document flow leaves no token or secret it handed out in a pg_dump of the database', async () => {
    const reporting = await issueApiKey(database.db, {
      accountId: account.accountId,
      name: 'reports',
      scopes: ['documents:read'],
    });
    const reader = {
      ...account,
      secret: reporting.secret,
      authorization: `Bearer ${reporting.apiKey.key}:${reporting.secret}`,
    };
    handed.apiSecret = account.secret;
    handed.readerSecret = reporting.secret;

    const hook = await call('/webhooks', {
      method: 'POST',
      headers: { 'idempotency-key': 'create-hook' },
      body: JSON.stringify({ url: receiver.url, events: [...SUBSCRIBABLE_EVENTS] }),
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    handed.webhookSecret = hook.body.data!.secret as string;
    receiver.setSecret(handed.webhookSecret);

    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [
        { name: 'Whatsapp Approver', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'Page Signer', phone: PHONES.uk, action_type: 'sign' },
      ],
    });
    documentId = doc.id;
    signerId = doc.approvers[1]!.id;
    // A draft's approvers have no link yet.
    const draft = await call(`/approvers/${signerId}/link`);
    expect(draft.status).toBe(409);
    expect(draft.body).toMatchObject({ success: false, error: { code: 409 } });
    expect(draft.body.error!.message).toContain('not been sent');

    expect((await send(h, doc.id)).status).toBe(200);
    const request = await requestFor(h, PHONES.saudiA, doc.id);
    handed.approverLink = linkTokenOf(request);

    // Every approver has a link from the send; it acts as the approver, so reading it needs documents:write.
    const link = await call(`/approvers/${signerId}/link`);
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    expect(link.body.data).toMatchObject({ usable_now: false, approver_status: 'waiting' });
    handed.signerLink = tokenIn(link.body.data!.url as string);
    const refused = await call(`/approvers/${signerId}/link`, { as: reader });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).not.toContain(handed.signerLink);

    // A GET never makes a link: an approver without one (as documents sent before links came with the send had)
    // is told so, and still has none afterwards.
    const columns = ['link_token_sha256', 'link_token_sealed'] as const;
    const saved = await database
      .db('approvers')
      .where({ id: signerId })
      .first<Record<(typeof columns)[number], string>>(columns);
    await database
      .db('approvers')
      .where({ id: signerId })
      .update({ link_token_sha256: null, link_token_sealed: null });
    const none = await call(`/approvers/${signerId}/link`);
    expect(none.status).toBe(409);
    expect(none.body.error!.message).toContain('no link yet');
    expect(await database.db('approvers').where({ id: signerId }).first(columns)).toEqual({
      link_token_sha256: null,
      link_token_sealed: null,
    });
    await database.db('approvers').where({ id: signerId }).update(saved);

    // The first approver approves from WhatsApp, the second signs on the page with the link the API handed out.
    expect((await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(request)[0]! })).status).toBe(
      200,
    );
    expect(linkTokenOf(await requestFor(h, PHONES.uk, doc.id))).toBe(handed.signerLink);
    expect((await pagePost(h, handed.signerLink, 'complete', { typed_name: 'Page Signer' })).status).toBe(
      200,
    );
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);

    const download = await call(`/documents/${doc.id}/download`, { as: reader });
    expect(download.status).toBe(200);
    const firstUrl = download.body.data!.download_url as string;
    handed.fileToken = tokenIn(firstUrl);
    const file = await fetchHandedOut(firstUrl);
    expect(file.status).toBe(200);
    expect(file.headers.get('cache-control')).toBe('private, no-cache');
    await file.arrayBuffer();

    const approved = await call(`/documents/${doc.id}`, { as: reader });
    const verificationUrl = approved.body.data!.verification_url as string;
    handed.verificationToken = tokenIn(verificationUrl);
    expect((await fetchHandedOut(verificationUrl)).status).toBe(200);

    // A leaked file URL is replaced: documents:write only, the old URL is gone at once, the new one works.
    const rotatePath = `/documents/${doc.id}/download/rotate`;
    expect((await call(rotatePath, { method: 'POST', as: reader })).status).toBe(403);
    const rotated = await call(rotatePath, { method: 'POST', headers: { 'idempotency-key': 'rotate-1' } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const newUrl = rotated.body.data!.download_url as string;
    handed.rotatedFileToken = tokenIn(newUrl);
    expect(newUrl).not.toBe(firstUrl);
    expect(rotated.body.data).toMatchObject({ filename: `${doc.reference}.pdf` });
    expect((await fetchHandedOut(firstUrl)).status).toBe(404);
    expect((await fetchHandedOut(newUrl)).status).toBe(200);
    // Served only while the document is approved (an approved document stays so; the row is changed here to
    // show the check).
    await database.db('documents').where({ id: doc.id }).update({ status: 'in_progress' });
    expect((await fetchHandedOut(newUrl)).status).toBe(404);
    await database.db('documents').where({ id: doc.id }).update({ status: 'approved' });
    expect((await call(`/documents/${doc.id}/download`)).body.data!.download_url).toBe(newUrl);
    const replay = await call(rotatePath, { method: 'POST', headers: { 'idempotency-key': 'rotate-1' } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data!.download_url).toBe(newUrl);

    // Only an approved document of the account's own has a URL to replace.
    const other = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Nobody Yet', phone: PHONES.saudiC, action_type: 'sign' }],
    });
    const early = await call(`/documents/${other.id}/download/rotate`, { method: 'POST' });
    expect(early.status).toBe(409);
    expect(early.body.error!.message).toContain('draft');
    const stranger = await h.service.createAccount();
    expect((await call(rotatePath, { method: 'POST', as: stranger })).status).toBe(404);

    // The deliveries: signed with the secret, the approval with the first URL, the rotation with the new one.
    const bodies = await eventually(() => {
      const got = receiver.requests.map(
        (r) =>
          JSON.parse(r.rawBody.toString('utf8')) as {
            event: string;
            data: { document: Record<string, unknown> };
          },
      );
      return got.some((b) => b.event === 'document.download_rotated') ? got : undefined;
    }, 60_000);
    expect(receiver.requests.every((r) => r.verification?.ok)).toBe(true);
    expect(bodies.find((b) => b.event === 'document.approved')!.data.document).toMatchObject({
      download_url: firstUrl,
      verification_url: verificationUrl,
    });
    expect(bodies.find((b) => b.event === 'document.download_rotated')!.data.document).toMatchObject({
      id: doc.id,
      status: 'approved',
      download_url: newUrl,
    });

    const dump = await dumpDatabase(database.url);
    // The dump is of this database and holds its rows (the document, and the digests links are looked up by).
    expect(dump).toContain(doc.reference);
    expect(dump).toContain(sha256Hex(handed.approverLink));
    expect(dump).toContain(sha256Hex(handed.rotatedFileToken));
    for (const [name, secret] of Object.entries(handed)) expect(dump.includes(secret), name).toBe(false);
  }, 240_000);

  it('rotates the encryption key: seal under k1, configure k2,k1, reseal, drop k1, and everything still works', async () => {
    expect(documentId, 'needs the flow above').toBeDefined();
    // The dashboard's second factor keeps its TOTP secret sealed too.
    const totp = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    await database.db('account_totp').insert({
      account_id: account.accountId,
      secret_sealed: h.service.deps.secrets.seal(totp, totpSecretContext(account.accountId)),
    });
    await h.close();
    h = await serviceWith([k2, k1]);
    expect((await call(`/approvers/${signerId}/link`)).body.data!.url).toContain(handed.signerLink);

    const first = await cli(['secrets:reseal', '--batch', '7'], [k2, k1]);
    expect(first.json).toMatchObject({ current_key_id: 'k2', failed: 0 });
    expect(first.json.resealed).toBeGreaterThan(10);
    expect(Object.keys(first.json.keys_in_use as object)).toEqual(['k2']);
    expect(first.stderr).toContain('webhooks.secret_sealed: 1 resealed');
    // Twice is harmless: nothing is left under another key.
    const again = await cli(['secrets:reseal'], [k2, k1]);
    expect(again.json).toMatchObject({ resealed: 0, failed: 0, keys_in_use: first.json.keys_in_use });
    const status = await cli(['secrets:status'], [k2]);
    expect(status.json.current_key_id).toBe('k2');

    await h.close();
    h = await serviceWith([k2]);
    // Every handed-out token and secret still works with k1 gone.
    expect((await call(`/approvers/${signerId}/link`)).body.data!.url).toContain(handed.signerLink);
    expect((await fetch(`${h.service.api.url}/a/${handed.approverLink}`)).status).toBe(410); // found: acted
    const download = await call(`/documents/${documentId}/download`);
    expect(tokenIn(download.body.data!.download_url as string)).toBe(handed.rotatedFileToken);
    expect((await fetchHandedOut(download.body.data!.download_url as string)).status).toBe(200);
    expect((await fetch(`${h.service.api.url}/v/${handed.verificationToken}`)).status).toBe(200);
    const replay = await call(`/documents/${documentId}/download/rotate`, {
      method: 'POST',
      headers: { 'idempotency-key': 'rotate-1' },
    });
    expect(replay.body.data!.download_url).toBe(download.body.data!.download_url);
    const hooks = await call('/webhooks');
    const hookId = (hooks.body.data as unknown as { id: string }[])[0]!.id;
    const test = await call(`/webhooks/${hookId}/test`, { method: 'POST' });
    expect(test.status, JSON.stringify(test.body)).toBe(200);
    expect(receiver.requests.at(-1)!.verification?.ok).toBe(true); // signed with the secret sealed under k1

    const { secret_sealed: sealedTotp } = await database
      .db('account_totp')
      .where({ account_id: account.accountId })
      .first<{ secret_sealed: string }>('secret_sealed');
    expect(h.service.deps.secrets.open(sealedTotp, totpSecretContext(account.accountId))).toBe(totp);

    // And a service that only knows k1 opens nothing any more.
    const onlyK1 = cli(['secrets:reseal'], [k1]);
    await expect(onlyK1).rejects.toMatchObject({ code: 1 });
  }, 240_000);
});
