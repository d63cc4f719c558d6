import http from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../src/api/schemas/envelopes.ts';
import { createDashboardAccount, csrfFrom, FormClient, type DashboardAccount } from '../helpers/dashboard.ts';
import { eventually, storedLinkTokens } from '../helpers/approval-flow.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';
import { approverOf, createDraft, documentOf, json, PHONE_A, PHONE_B, type DocumentJson } from './support.ts';

/**
 * Issue 10: no input crashes the process. Every own property name of Object.prototype — `__proto__`,
 * `constructor`, `toString`, `hasOwnProperty`, `valueOf`, `__defineGetter__`, … — goes in as a multipart part
 * name (file and field), a JSON key, a urlencoded form name, a query-string key and a header name. Each answer is
 * a 4xx in the envelope, or the 2xx the request deserves when the name is simply not one the route reads; after
 * each batch the service still answers and still creates documents, and a refused upload left nothing behind.
 */
const HOSTILE = Object.getOwnPropertyNames(Object.prototype).sort();
/** A value that would pollute Object.prototype if a parser merged it into a plain object. */
const POISON = { polluted: 'yes', prototype: { polluted: 'yes' } } as const;
const ONE_FILE = 'Only one file may be uploaded, in the field named "file"';
const PROTO_JSON = 'The JSON body has a "__proto__" key, which is not accepted';

interface Service extends TestService {
  storedFiles(): Promise<string[]>;
  tempFiles(): Promise<string[]>;
}

let service: Service;
let dataDir: string;
let account: TestAccount;
/** Webhooks get an account of their own, so the documents made here send them nothing. */
let hooksAccount: TestAccount;
let pdf: Uint8Array;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-hostile-'));
  const started = await startTestService({ env: { DATA_DIR: dataDir } });
  const files = async (sub: string) =>
    (
      await readdir(path.join(dataDir, 'files', sub), { recursive: true, withFileTypes: true }).catch(
        () => [],
      )
    )
      .filter((e) => e.isFile())
      .map((e) => path.relative(path.join(dataDir, 'files'), path.join(e.parentPath, e.name)));
  service = Object.assign(started, {
    storedFiles: async () => (await files('')).filter((p) => !p.startsWith('.tmp')),
    tempFiles: () => files('.tmp'),
  });
  account = await service.createAccount({ plan: 'enterprise' });
  hooksAccount = await service.createAccount({ plan: 'enterprise' });
  pdf = await makePdf(1);
});
afterAll(async () => {
  await service.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('covers every own property name of Object.prototype', () => {
  expect(HOSTILE).toEqual(
    expect.arrayContaining([
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      '__defineGetter__',
      '__lookupSetter__',
      'isPrototypeOf',
      'propertyIsEnumerable',
      'toLocaleString',
    ]),
  );
  expect(HOSTILE.length).toBeGreaterThanOrEqual(12);
});

// ---- helpers ----

type Part = [name: string, value: string | { file: Uint8Array; filename?: string }];

function form(parts: Part[]): FormData {
  const body = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') body.append(name, value);
    else body.append(name, new Blob([value.file], { type: 'application/pdf' }), value.filename ?? 'a.pdf');
  }
  return body;
}

const pdfPart = (): Part => ['file', { file: pdf }];

interface Envelope {
  success: false;
  error: { code: number; message: string; details: Record<string, string[]> };
}

/** The error envelope, checked against its schema; `details` as own entries of the JSON exactly as sent. */
async function envelopeOf(res: Response, status: number): Promise<Envelope> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as Envelope;
  expect(ErrorEnvelope.safeParse(body).success, text).toBe(true);
  expect(body.error.code).toBe(status);
  return body;
}

async function expectDetails(res: Response, details: [string, string[]][]): Promise<void> {
  const body = await envelopeOf(res, 422);
  expect(body.error.message).toBe('Validation failed');
  const sortEntries = (e: [string, string[]][]) => [...e].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  expect(sortEntries(Object.entries(body.error.details))).toEqual(sortEntries(details));
}

async function documentsOf(who: TestAccount): Promise<number> {
  const [row] = await service.database
    .db('documents')
    .where({ account_id: who.accountId })
    .count<{ count: string }[]>({ count: '*' });
  return Number(row!.count);
}

/** What a refused request must leave as it was. */
async function snapshot() {
  return { rows: await documentsOf(account), files: (await service.storedFiles()).sort() };
}

async function expectUnchanged(before: Awaited<ReturnType<typeof snapshot>>): Promise<void> {
  expect(await snapshot()).toEqual(before);
  expect(await service.tempFiles()).toEqual([]);
}

/** The process is alive and still does its job: health answers, and a normal upload makes a draft. */
async function expectAlive(): Promise<void> {
  const health = await fetch(`${service.baseUrl}/health`);
  expect(health.status, await health.clone().text()).toBe(200);
  const draft = await createDraft(service, account, { title: 'Still alive' });
  expect(draft.status).toBe('draft');
  expect(Object.prototype).not.toHaveProperty('polluted');
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

function postDocument(parts: Part[]): Promise<Response> {
  return service.request('/documents', { method: 'POST', account, body: form(parts) });
}

async function getDocument(id: string): Promise<DocumentJson> {
  const res = await service.request(`/documents/${id}`, { account });
  expect(res.status).toBe(200);
  return documentOf(await res.json());
}

/** A JSON body with `name` as a key, written out exactly (a `__proto__` key included). */
function jsonWith(base: Record<string, unknown>, name: string, value: unknown): string {
  const body = Object.assign(Object.create(null) as Record<string, unknown>, base);
  Object.defineProperty(body, name, { value, enumerable: true });
  const text = JSON.stringify(body);
  expect(text).toContain(`"${name}":`);
  return text;
}

const VALUES: [string, unknown][] = [
  ['a string', 'x'],
  ['an object', POISON],
];

// ---- multipart: POST /documents ----

describe('multipart part names on POST /documents', () => {
  it.each(HOSTILE)('a file part named %s is a 422 on that name, and nothing is kept', async (name) => {
    const before = await snapshot();
    const res = await postDocument([['title', 'x'], [name, { file: pdf }], pdfPart()]);
    await expectDetails(res, [[name, [ONE_FILE]]]);
    await expectUnchanged(before);
  });

  it.each(HOSTILE)('a field named %s is ignored like any unknown field (201)', async (name) => {
    const res = await postDocument([[name, 'x'], ['title', 'Named field'], pdfPart()]);
    const text = await res.text();
    expect(res.status, text).toBe(201);
    const doc = documentOf(JSON.parse(text));
    expect(doc.title_en).toBe('Named field');
    expect(JSON.stringify(await getDocument(doc.id))).not.toContain(`"${name}"`);
  });

  it.each(HOSTILE)('an over-long field named %s is a 422 on that name', async (name) => {
    const before = await snapshot();
    const res = await postDocument([['title', 'x'], [name, 'y'.repeat(17 * 1024)], pdfPart()]);
    await expectDetails(res, [[name, [`${name} is too long`]]]);
    await expectUnchanged(before);
  });

  it.each(HOSTILE)('approvers[0][%s] is ignored or refused by the approver-part rule', async (name) => {
    const before = await snapshot();
    const res = await postDocument([
      ['title', 'x'],
      [`approvers[0][${name}]`, 'x'],
      ['approvers[0][name]', 'Ali'],
      ['approvers[0][phone]', PHONE_A],
      pdfPart(),
    ]);
    if (/^[a-z_]{1,32}$/.test(name)) {
      // A well-formed approvers[N][field] part whose field the schema does not know: ignored.
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const doc = documentOf(JSON.parse(text));
      expect(doc.approvers.map((a) => [a.name_en, a.phone])).toEqual([['Ali', PHONE_A]]);
    } else {
      await expectDetails(res, [
        [
          `approvers[0][${name}]`,
          ['approver fields are sent as approvers[N][field], e.g. approvers[0][phone]'],
        ],
      ]);
      await expectUnchanged(before);
    }
  });

  it('every name at once, short and over-long, in one request: one 422 naming each', async () => {
    const before = await snapshot();
    const parts: Part[] = [['title', 'x']];
    for (const name of HOSTILE) parts.push([name, 'x'], [name, 'y'.repeat(17 * 1024)]);
    parts.push(pdfPart());
    await expectDetails(
      await postDocument(parts),
      HOSTILE.map((name) => [name, [`${name} is too long`]]),
    );
    await expectUnchanged(before);
  });

  it('hostile Content-Type parameters do not matter', async () => {
    const encoded = new Response(form([['title', 'Params'], pdfPart()]));
    const type = encoded.headers.get('content-type')!;
    const params = HOSTILE.map((name) => `${name}=x`).join('; ');
    const res = await service.request('/documents', {
      method: 'POST',
      account,
      headers: { 'content-type': `${type}; ${params}` },
      body: await encoded.arrayBuffer(),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  });

  it('the service is alive after the batch', expectAlive);
});

/** A raw multipart body, cut off wherever the test says (fetch would always finish it). */
function rawUpload(body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${service.baseUrl}/documents`, {
      method: 'POST',
      headers: { authorization: account.authorization, 'content-type': 'multipart/form-data; boundary=B' },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('multipart bodies cut off inside a file part', () => {
  it.each([
    ['the file part', 'file'],
    ['a discarded file part', 'constructor'],
    ['a discarded file part named __proto__', '__proto__'],
  ])('%s: a 400 in the envelope, nothing kept', async (_label, name) => {
    const before = await snapshot();
    const { status, text } = await rawUpload(
      `--B\r\nContent-Disposition: form-data; name="title"\r\n\r\nx\r\n` +
        `--B\r\nContent-Disposition: form-data; name="${name}"; filename="a.pdf"\r\n` +
        `Content-Type: application/pdf\r\n\r\n%PDF-1.7 cut off here`,
    );
    expect(status, text).toBe(400);
    expect(JSON.parse(text)).toEqual({
      success: false,
      error: {
        code: 400,
        message: 'Malformed multipart/form-data request: Unexpected end of form',
        details: {},
      },
    });
    await expectUnchanged(before);
  });

  it('the service is alive after the batch', expectAlive);
});

// ---- multipart: PUT /documents/{id} ----

describe('multipart part names on PUT /documents/{id}', () => {
  let draft: DocumentJson;
  beforeAll(async () => {
    draft = await createDraft(service, account, { title: 'Update me' });
  });

  it.each(HOSTILE)(
    'a file part named %s is a 422, and the draft and its file are untouched',
    async (name) => {
      const before = await snapshot();
      const res = await service.request(`/documents/${draft.id}`, {
        method: 'PUT',
        account,
        body: form([
          [name, { file: pdf }],
          ['title', 'Changed'],
          ['file', { file: await makePdf(3) }],
        ]),
      });
      await expectDetails(res, [[name, [ONE_FILE]]]);
      await expectUnchanged(before);
      expect(await getDocument(draft.id)).toEqual(draft);
    },
  );

  it.each(HOSTILE)('a field named %s is ignored; the fields the route knows still apply', async (name) => {
    const title = `Renamed beside ${name}`;
    const res = await service.request(`/documents/${draft.id}`, {
      method: 'PUT',
      account,
      body: form([
        [name, 'x'],
        ['title', title],
      ]),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const doc = documentOf(await res.json());
    expect([doc.title_ar, doc.title_en]).toEqual([title, title]);
    expect(doc.file).toEqual(draft.file);
  });

  it('the service is alive after the batch', expectAlive);
});

// ---- JSON bodies ----

describe('JSON keys', () => {
  let draft: DocumentJson;
  beforeAll(async () => {
    draft = await createDraft(service, account, { title: 'JSON keys' }, [{ name: 'Ali', phone: PHONE_A }]);
  });

  /** The answer for a key the route does not read: the 2xx it deserves, or co-body's refusal of `__proto__`. */
  async function expectIgnored(res: Response, name: string, status: number): Promise<unknown> {
    if (name === '__proto__') {
      const body = await envelopeOf(res, 400);
      expect(body.error).toEqual({ code: 400, message: PROTO_JSON, details: {} });
      return undefined;
    }
    const text = await res.text();
    expect(res.status, text).toBe(status);
    return JSON.parse(text);
  }

  describe.each(VALUES)('with %s as the value', (_label, value) => {
    it.each(HOSTILE)('POST /documents/{id}/approvers with a key %s', async (name) => {
      const res = await service.request(`/documents/${draft.id}/approvers`, {
        method: 'POST',
        account,
        headers: { 'content-type': 'application/json' },
        body: jsonWith({ name: 'Sara', phone: PHONE_B }, name, value),
      });
      const body = await expectIgnored(res, name, 201);
      if (body) {
        const approver = approverOf(body);
        expect([approver.name_en, approver.phone]).toEqual(['Sara', PHONE_B]);
        expect(
          (await service.request(`/approvers/${approver.id}`, { method: 'DELETE', account })).status,
        ).toBe(200);
      }
    });

    it.each(HOSTILE)('PUT /approvers/{id} with a key %s', async (name) => {
      const approverId = draft.approvers[0]!.id;
      const res = await service.request(`/approvers/${approverId}`, {
        method: 'PUT',
        account,
        headers: { 'content-type': 'application/json' },
        body: jsonWith({ role_en: `Role ${name}` }, name, value),
      });
      const body = await expectIgnored(res, name, 200);
      if (body) expect(approverOf(body).role_en).toBe(`Role ${name}`);
    });

    it.each(HOSTILE)('PUT /documents/{id} (JSON) with a key %s', async (name) => {
      const res = await service.request(`/documents/${draft.id}`, {
        method: 'PUT',
        account,
        headers: { 'content-type': 'application/json' },
        body: jsonWith({ title_en: `Title ${name}` }, name, value),
      });
      const body = await expectIgnored(res, name, 200);
      if (body) expect(documentOf(body).title_en).toBe(`Title ${name}`);
    });

    it.each(HOSTILE)('POST /webhooks with a key %s', async (name) => {
      const res = await service.request('/webhooks', {
        method: 'POST',
        account: hooksAccount,
        headers: { 'content-type': 'application/json' },
        body: jsonWith({ url: 'http://127.0.0.1:9/hook', events: ['document.sent'] }, name, value),
      });
      const body = (await expectIgnored(res, name, 201)) as { data: { id: string; url: string } } | undefined;
      if (body) {
        expect(body.data.url).toBe('http://127.0.0.1:9/hook');
        const update = await service.request(`/webhooks/${body.data.id}`, {
          method: 'PUT',
          account: hooksAccount,
          headers: { 'content-type': 'application/json' },
          body: jsonWith({ active: false }, name, value),
        });
        expect(update.status, await update.clone().text()).toBe(200);
      }
    });

    it.each(HOSTILE)('a body that is only the key %s gets the route’s own 422', async (name) => {
      if (name === '__proto__') return; // refused outright above
      const res = await service.request('/webhooks', {
        method: 'POST',
        account: hooksAccount,
        headers: { 'content-type': 'application/json' },
        body: jsonWith({}, name, value),
      });
      await expectDetails(res, [
        ['url', ['url is required']],
        ['events', ['events is required']],
      ]);
    });
  });

  it('the service is alive after the batch', expectAlive);
});

// ---- query strings and headers ----

describe('query-string keys and header names', () => {
  let webhookId: string;
  beforeAll(async () => {
    const res = await service.request('/webhooks', {
      method: 'POST',
      account: hooksAccount,
      ...json({ url: 'http://127.0.0.1:9/list', events: ['document.sent'] }),
    });
    expect(res.status).toBe(201);
    webhookId = ((await res.json()) as { data: { id: string } }).data.id;
  });

  it.each(HOSTILE)('?%s=… on the list routes is ignored (200)', async (name) => {
    const q = `${encodeURIComponent(name)}=1&${encodeURIComponent(name)}=2&page=1`;
    for (const [path, who] of [
      [`/documents?${q}`, account],
      [`/webhooks?${q}`, hooksAccount],
      [`/webhooks/${webhookId}/deliveries?${q}`, hooksAccount],
    ] as const) {
      const res = await service.request(path, { account: who });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      expect(((await res.json()) as { meta: { current_page: number } }).meta.current_page).toBe(1);
    }
  });

  it.each(HOSTILE)('%s as a query value is the documented 422', async (name) => {
    const res = await service.request(`/documents?status=${encodeURIComponent(name)}&per_page=${name}`, {
      account,
    });
    const body = await envelopeOf(res, 422);
    expect(Object.keys(body.error.details).sort()).toEqual(['per_page', 'status']);
  });

  it('every name as a request header is ignored', async () => {
    const headers = new Headers();
    for (const name of HOSTILE) headers.set(name, 'x');
    const res = await service.request('/documents', { account, headers });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it('the service is alive after the batch', expectAlive);
});

// ---- the approval page /a/{token} ----

describe('the approval page', () => {
  let token: string;
  let approverId: string;
  beforeAll(async () => {
    const doc = await createDraft(service, account, { title: 'Approve me' }, [
      { name: 'Signer', phone: PHONE_A, action_type: 'sign' },
    ]);
    approverId = doc.approvers[0]!.id;
    const sent = await service.request(`/documents/${doc.id}/send`, { method: 'POST', account });
    expect(sent.status, await sent.clone().text()).toBe(200);
    token = await eventually(async () =>
      (await storedLinkTokens(service, { id: approverId })).get(approverId),
    );
  });

  const page = (suffix: string, init: RequestInit = {}) => fetch(`${service.api.url}/a/${suffix}`, init);
  const SIGN = 'Draw a signature (signature_png) or type your name (typed_name)';

  describe.each(VALUES)('JSON keys, with %s as the value', (_label, value) => {
    it.each(HOSTILE)(
      'POST /a/{token}/complete with only the key %s: the 422 of a missing signature',
      async (name) => {
        const res = await page(`${token}/complete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: jsonWith({}, name, value),
        });
        await expectDetails(res, [['signature_png', [SIGN]]]);
      },
    );
  });

  it.each(HOSTILE)('a urlencoded form with the name %s is refused before it is read: 415', async (name) => {
    const res = await page(`${token}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${encodeURIComponent(name)}=x&${encodeURIComponent(`${name}[polluted]`)}=yes`,
    });
    const body = await envelopeOf(res, 415);
    expect(body.error.message).toMatch(/application\/json/);
  });

  it.each(HOSTILE)('JSON that is not JSON, with the name %s, is 400', async (name) => {
    const res = await page(`${token}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `${encodeURIComponent(name)}=x&${encodeURIComponent(`${name}[polluted]`)}=yes`,
    });
    const body = await envelopeOf(res, 400);
    expect(body.error.message).toBe('Malformed JSON in request body');
  });

  it.each(HOSTILE)('/a/assets/%s names no asset: 404', async (name) => {
    await envelopeOf(await page(`assets/${encodeURIComponent(name)}`), 404);
  });

  it.each(HOSTILE)('?%s=… on the page is ignored', async (name) => {
    const res = await page(`${token}?${encodeURIComponent(name)}=x&lang=${encodeURIComponent(name)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('a rejection carrying every name as a key goes through with its reason', async () => {
    const body = Object.create(null) as Record<string, unknown>;
    for (const name of HOSTILE) Object.defineProperty(body, name, { value: POISON, enumerable: true });
    body.reason = 'Wrong amounts';
    const res = await page(`${token}/reject`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const row = await eventually(async () => {
      const r = await service.database
        .db('approvers')
        .where({ id: approverId })
        .first<{ status: string; rejection_reason: string | null }>();
      return r?.status === 'rejected' && r;
    });
    expect(row.rejection_reason).toBe('Wrong amounts');
  });

  it('the service is alive after the batch', expectAlive);
});

// ---- urlencoded forms: the dashboard and the dev inbox ----

describe('urlencoded form names', () => {
  let holder: DashboardAccount;
  let origin: string;
  beforeAll(async () => {
    holder = await createDashboardAccount(service);
    origin = service.api.url.replace('localhost', '127.0.0.1');
  });

  it.each(HOSTILE)('the login form with a field %s beside the real ones signs in (303)', async (name) => {
    const client = new FormClient(origin);
    const token = csrfFrom(await (await client.get('/admin/login')).text());
    const res = await client.post('/admin/login', {
      [name]: 'x',
      [`${name}[polluted]`]: 'yes',
      [`${name}.polluted`]: 'yes',
      _csrf: token,
      email: holder.email,
      password: holder.password,
    });
    expect(res.status, await res.clone().text()).toBe(303);
    expect(res.headers.get('location')).toBe('/admin');
  });

  it.each(HOSTILE)('the login form with only a field %s asks for email and password (422)', async (name) => {
    const client = new FormClient(origin);
    const token = csrfFrom(await (await client.get('/admin/login')).text());
    const res = await client.post('/admin/login', { _csrf: token, [name]: 'x', [`_csrf[${name}]`]: 'x' });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('Enter your email and password.');
  });

  it('the API key form with every name beside the real fields creates the key', async () => {
    const client = new FormClient(origin);
    const csrf = await client.signIn(holder.email, holder.password);
    const fields = Object.create(null) as Record<string, string>;
    for (const name of HOSTILE) Object.defineProperty(fields, name, { value: 'x', enumerable: true });
    Object.assign(fields, { _csrf: csrf, name: 'Hostile-form key', scopes: 'documents:read' });
    const res = await client.post('/admin/api/keys', fields);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.text()).toContain('Hostile-form key');
  });

  it.each(HOSTILE)('the dev inbox reply form with only %s: 404 in the envelope', async (name) => {
    const res = await fetch(`${service.api.url}/dev/inbox/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${encodeURIComponent(name)}=1&payload=${encodeURIComponent(name)}`,
    });
    const body = await envelopeOf(res, 404);
    expect(body.error.message).toBe('Message not found');
  });

  it('the service is alive after the batch', expectAlive);
});
