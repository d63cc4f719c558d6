import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../src/api/schemas/envelopes.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { FormClient, csrfFrom } from '../helpers/dashboard.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  messagesTo,
  nthMessageTo,
  send,
  startFlowHarness,
  statusOf,
  type CreatedDocument,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * The public pages' POSTs take only the media type their own script sends (JSON; the file itself for the
 * verification check), so a form another site makes a visitor's browser post (text/plain, urlencoded,
 * multipart) is a 415 that does nothing: no action, no code sent, no rate limit counted. The approver's PDF is
 * never sniffed and is framed exactly as its page is. embed_origins refuses wildcards over public suffixes.
 */
const SIGNER = '966501220001';
const VERIFIED = '966501220002';

let h: FlowHarness;
let doc: CreatedDocument;
let signerToken: string;
let verifiedToken: string;
beforeAll(async () => {
  h = await startFlowHarness();
  doc = await createDocument(h, {
    workflowType: 'parallel',
    approvers: [
      { name: 'Signer', phone: SIGNER, action_type: 'sign' },
      { name: 'Verified', phone: VERIFIED, action_type: 'approve_only' },
    ],
    fields: { allow_delegation: 'true', 'approvers[1][verification]': 'whatsapp_otp' },
  });
  expect((await send(h, doc.id)).status).toBe(200);
  signerToken = linkTokenOf(await nthMessageTo(h, SIGNER, 0));
  verifiedToken = linkTokenOf(await nthMessageTo(h, VERIFIED, 0));
  await eventually(async () => (await statusOf(h, doc.id)).approvers.every((a) => a.status === 'notified'));
}, 120_000);
afterAll(() => h?.close());

const url = (path: string) => `${h.service.api.url}${path}`;

/** What an HTML form on another site can send, and what a script that forgot its header sends. */
const CROSS_SITE: { name: string; headers: Record<string, string>; body: RequestInit['body'] }[] = [
  {
    name: 'text/plain holding JSON',
    headers: { 'content-type': 'text/plain' },
    body: '{"reason":"forged","typed_name":"Forged","generated_seal":true,"code":"123456"}',
  },
  {
    name: 'a urlencoded form',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'reason=forged&typed_name=Forged',
  },
  { name: 'a multipart form', headers: {}, body: formData({ reason: 'forged', typed_name: 'Forged' }) },
  { name: 'no content type', headers: {}, body: new Blob(['{}']) },
  { name: 'application/jsonp', headers: { 'content-type': 'application/jsonp' }, body: '{}' },
];

function formData(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}

async function expect415(res: Response) {
  const text = await res.text();
  expect(res.status, text).toBe(415);
  expect(ErrorEnvelope.parse(JSON.parse(text)).error).toMatchObject({ code: 415 });
}

describe('approval page POSTs', () => {
  it.each(CROSS_SITE)('refuse $name with 415, and nothing happens', async ({ headers, body }) => {
    const codesBefore = messagesTo(h, VERIFIED).length;
    for (const [token, path] of [
      [signerToken, 'complete'],
      [signerToken, 'reject'],
      [signerToken, 'delegate'],
      [verifiedToken, 'code'],
      [verifiedToken, 'code/verify'],
      [verifiedToken, 'complete'],
    ] as const) {
      await expect415(await fetch(url(`/a/${token}/${path}`), { method: 'POST', headers, body }));
    }
    // Refused before the token is even looked at.
    await expect415(
      await fetch(url(`/a/${randomBytes(32).toString('base64url')}/reject`), {
        method: 'POST',
        headers,
        body,
      }),
    );
    const status = await statusOf(h, doc.id);
    expect(status.status).toBe('pending');
    expect(status.approvers.map((a) => a.status)).toEqual(['notified', 'notified']);
    expect(messagesTo(h, VERIFIED)).toHaveLength(codesBefore);
  });

  it('take application/json (with a charset) as the page script sends it', async () => {
    const sent = await fetch(url(`/a/${verifiedToken}/code`), {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{}',
    });
    expect(sent.status, await sent.clone().text()).toBe(200);
    await nthMessageTo(h, VERIFIED, 1);
  });

  it('the page scripts send their POSTs with the types the routes take', async () => {
    // The approval page's scripts are served under names made from their content, as these files' bytes.
    const folder = path.resolve(import.meta.dirname, '../../src/approval-page/public');
    const approvalScripts = await Promise.all(
      (await readdir(folder))
        .filter((name) => name.endsWith('.js'))
        .map((name) => readFile(path.join(folder, name), 'utf8')),
    );
    const verifyScript = await (await fetch(url('/v/assets/verify.js'))).text();
    for (const [script, texts, type] of [
      ['the approval page', approvalScripts, 'application/json'],
      ['/v/assets/verify.js', [verifyScript], 'application/octet-stream'],
    ] as const) {
      const posts = texts.flatMap((text) => text.split(/method: 'POST'/).slice(1));
      expect(posts.length, script).toBeGreaterThan(0);
      for (const rest of posts)
        expect(rest.slice(0, 120).toLowerCase(), script).toContain(`'content-type': '${type}'`);
    }
  });
});

describe('the verification check', () => {
  it('takes the file as application/octet-stream or application/pdf, nothing a form can send', async () => {
    const token = `/v/${randomBytes(32).toString('base64url')}/check`;
    for (const { headers, body } of CROSS_SITE)
      await expect415(await fetch(url(token), { method: 'POST', headers, body }));
    for (const type of ['application/octet-stream', 'application/pdf']) {
      const res = await fetch(url(token), {
        method: 'POST',
        headers: { 'content-type': type },
        body: '%PDF',
      });
      expect(res.status, type).toBe(404); // past the type check: an unknown token
    }
  });
});

describe("the approver's PDF", () => {
  const framing = (res: Response) => ({
    csp: res.headers.get('content-security-policy'),
    xfo: res.headers.get('x-frame-options'),
    nosniff: res.headers.get('x-content-type-options'),
    referrer: res.headers.get('referrer-policy'),
  });
  const ancestors = (res: Response) =>
    /frame-ancestors ([^;]+)/.exec(res.headers.get('content-security-policy') ?? '')?.[1];

  it('is never sniffed, and is framed by whom its page is', async () => {
    const pdf = await fetch(url(`/a/${signerToken}/document.pdf`));
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    await pdf.arrayBuffer();
    expect(framing(pdf)).toEqual({
      csp: "frame-ancestors 'none'",
      xfo: 'DENY',
      nosniff: 'nosniff',
      referrer: 'no-referrer',
    });
    const unknown = await fetch(url(`/a/${randomBytes(32).toString('base64url')}/document.pdf`));
    expect(unknown.status).toBe(404);
    expect(framing(unknown)).toMatchObject({ csp: "frame-ancestors 'none'", nosniff: 'nosniff' });

    await accountsStore(h.service.database.db).setEmbedOrigins(h.account.accountId, [
      'https://app.example.com',
      'https://*.partner.example.org',
    ]);
    const page = await fetch(url(`/a/${signerToken}`));
    await page.text();
    const framed = await fetch(url(`/a/${signerToken}/document.pdf`));
    await framed.arrayBuffer();
    expect(ancestors(framed)).toBe('https://app.example.com https://*.partner.example.org');
    expect(ancestors(framed)).toBe(ancestors(page));
    expect(framing(framed)).toMatchObject({ xfo: null, nosniff: 'nosniff' });
    await accountsStore(h.service.database.db).setEmbedOrigins(h.account.accountId, []);
  });
});

describe('embed_origins', () => {
  const suffixes = ['https://*.github.io', 'https://*.co.uk', 'https://*.com.sa', 'https://*.blogspot.com'];

  it('refuses a wildcard over a public suffix, on the API and the dashboard', async () => {
    for (const origin of suffixes) {
      const res = await h.service.request('/account/settings', {
        method: 'PUT',
        account: h.account,
        body: JSON.stringify({ embed_origins: [origin] }),
      });
      const body = ErrorEnvelope.parse(await res.json());
      expect(res.status, origin).toBe(422);
      expect(body.error.details['embed_origins.0']?.[0], origin).toMatch(/a public suffix/);
    }
    const account = await accountsStore(h.service.database.db).findById(h.account.accountId);
    const client = new FormClient(h.service.api.url);
    await client.signIn(account!.email, 'correct horse battery staple');
    const page = await client.get('/admin/api');
    const res = await client.post('/admin/api/embed-origins', {
      _csrf: csrfFrom(await page.text()),
      embed_origins: 'https://*.github.io',
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('<bdi>github.io</bdi>, a public suffix');
    await client.close();
    expect((await accountsStore(h.service.database.db).findById(h.account.accountId))!.embedOrigins).toEqual(
      [],
    );
  });

  it('takes one over a registrable domain under such a suffix', async () => {
    const res = await h.service.request('/account/settings', {
      method: 'PUT',
      account: h.account,
      body: JSON.stringify({ embed_origins: ['https://*.acme.co.uk', 'https://*.acme.github.io'] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  });
});
