import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  documentOf,
  PHONE_A,
  PHONE_B,
  startDocumentsService,
  type DocumentsService,
} from '../documents/support.ts';

/**
 * POST /documents as the clients integrators use build it, each over real HTTP: curl's `-F`, Node's FormData with
 * Blob parts (which always carry `filename="blob"`), Python's requests, and an HTML form as Chromium encodes it.
 * Each sends JSON parts and string forms of booleans and numbers the way that client does, and each is a 201 with
 * the values it meant.
 */

const run = promisify(execFile);

let service: DocumentsService;
let account: TestAccount;
let dir: string;
let pdfPath: string;
let pdf: Buffer;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-clients-'));
  pdf = Buffer.from(await makePdf(1));
  pdfPath = path.join(dir, 'contract.pdf');
  await writeFile(pdfPath, pdf);
});
afterAll(async () => {
  await service.close();
  await rm(dir, { recursive: true, force: true });
});

const APPROVERS = [
  { name: 'Sara', phone: `+${PHONE_A}`, notify: false },
  { name: 'Omar', phone: PHONE_B, action_type: 'approve_only', order_index: 1 },
];
const REMINDERS = { first_after_hours: 12, every_hours: 24, max: 2 };
const CC = [{ phone: '966561234567', language: 'en' }];

/** What each client below meant to create, read back from the 201. */
function expectIntended(status: number, text: string) {
  expect(status, text).toBe(201);
  const doc = documentOf(JSON.parse(text));
  // Listed in signing order.
  expect(doc.approvers.map((a) => [a.name_en, a.phone, a.notify, a.order_index, a.action_type])).toEqual([
    ['Omar', PHONE_B, true, 1, 'approve_only'],
    ['Sara', PHONE_A, false, 2, 'sign'],
  ]);
  expect(doc.reminders).toEqual(REMINDERS);
  expect(doc.allow_delegation).toBe(true);
  return doc;
}

const url = () => `${service.baseUrl}/documents`;

describe('curl -F', () => {
  it('takes the approvers from a JSON file part (curl sends its filename) and the rest as fields', async () => {
    const approversPath = path.join(dir, 'approvers.json');
    await writeFile(approversPath, JSON.stringify(APPROVERS.map((a, i) => ({ ...a, order_index: 2 - i }))));
    const { stdout } = await run('curl', [
      '-sS',
      '-w',
      '\n%{http_code}',
      '-H',
      `Authorization: ${account.authorization}`,
      '-F',
      'title=Supply contract',
      '-F',
      'allow_delegation=true',
      '-F',
      `approvers=@${approversPath};type=application/json`,
      '-F',
      `reminders=${JSON.stringify(REMINDERS)};type=application/json`,
      '-F',
      `file=@${pdfPath};type=application/pdf`,
      url(),
    ]);
    const [text, status] = splitStatus(stdout);
    expectIntended(status, text);
  });

  it('takes approvers[N][field] and reminders[field] parts in their string forms', async () => {
    const { stdout } = await run('curl', [
      '-sS',
      '-w',
      '\n%{http_code}',
      '-H',
      `Authorization: ${account.authorization}`,
      ...['title=Supply contract', 'allow_delegation=true'].flatMap((f) => ['-F', f]),
      ...[
        'approvers[0][name]=Sara',
        `approvers[0][phone]=+${PHONE_A}`,
        'approvers[0][notify]=false',
        'approvers[0][order_index]=2',
        'approvers[1][name]=Omar',
        `approvers[1][phone]=${PHONE_B}`,
        'approvers[1][action_type]=approve_only',
        'approvers[1][order_index]=1',
        'approvers[1][notify]=true',
        'reminders[first_after_hours]=12',
        'reminders[every_hours]=24',
        'reminders[max]=2',
      ].flatMap((f) => ['--form-string', f]),
      '-F',
      `file=@${pdfPath};type=application/pdf`,
      url(),
    ]);
    const [text, status] = splitStatus(stdout);
    expectIntended(status, text);
  });
});

describe('Node FormData with Blob parts', () => {
  it('reads the approvers, cc and reminders Blobs (filename="blob") as JSON', async () => {
    const form = new FormData();
    form.append('title', 'Supply contract');
    form.append('allow_delegation', 'true');
    const approvers = APPROVERS.map((a, i) => ({ ...a, order_index: 2 - i }));
    form.append('approvers', new Blob([JSON.stringify(approvers)], { type: 'application/json' }));
    form.append('cc', new Blob([JSON.stringify(CC)], { type: 'application/json' }));
    form.append('reminders', new Blob([JSON.stringify(REMINDERS)], { type: 'application/json' }));
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'contract.pdf');
    const res = await service.request('/documents', { method: 'POST', account, body: form });
    const doc = expectIntended(res.status, await res.text());
    expect(doc.cc).toEqual([{ phone: '966561234567', language: 'en', name: null }]);
  });
});

describe('Python requests', () => {
  it('sends the JSON parts as files or as fields, and both are read', async () => {
    const script = `
import json, sys, requests
url, auth, pdf_path = sys.argv[1:4]
approvers = json.loads(sys.argv[4])
reminders = json.loads(sys.argv[5])
answers = []
with open(pdf_path, "rb") as pdf:
    body = pdf.read()
for approvers_part in [("approvers.json", json.dumps(approvers), "application/json"), (None, json.dumps(approvers))]:
    r = requests.post(
        url,
        headers={"Authorization": auth},
        data={"title": "Supply contract", "allow_delegation": "true"},
        files={
            "approvers": approvers_part,
            "reminders": (None, json.dumps(reminders), "application/json"),
            "file": ("contract.pdf", body, "application/pdf"),
        },
    )
    answers.append({"status": r.status_code, "text": r.text})
print(json.dumps(answers))
`;
    const approvers = APPROVERS.map((a, i) => ({ ...a, order_index: 2 - i }));
    const { stdout } = await run('python3', [
      '-c',
      script,
      url(),
      account.authorization,
      pdfPath,
      JSON.stringify(approvers),
      JSON.stringify(REMINDERS),
    ]);
    const answers = JSON.parse(stdout) as { status: number; text: string }[];
    expect(answers).toHaveLength(2);
    for (const { status, text } of answers) expectIntended(status, text);
  });
});

describe('an HTML form', () => {
  it('is read from the multipart body Chromium encodes for it, every input a string', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.setContent(`<form enctype="multipart/form-data" method="post">
        <input name="title" value="Supply contract">
        <input type="checkbox" name="allow_delegation" value="true" checked>
        <input name="approvers[0][name]" value="Sara">
        <input type="tel" name="approvers[0][phone]" value="+${PHONE_A}">
        <select name="approvers[0][notify]"><option value="true">yes</option><option value="false" selected>no</option></select>
        <input type="number" name="approvers[0][order_index]" value="2">
        <input name="approvers[0][role_en]" value="">
        <input name="approvers[1][name]" value="Omar">
        <input type="tel" name="approvers[1][phone]" value="${PHONE_B}">
        <select name="approvers[1][action_type]"><option>sign</option><option selected>approve_only</option></select>
        <input type="number" name="approvers[1][order_index]" value="1">
        <input type="number" name="reminders[first_after_hours]" value="12">
        <input type="number" name="reminders[every_hours]" value="24">
        <input type="number" name="reminders[max]" value="2">
        <input type="file" name="file">
      </form>`);
      await page.setInputFiles('input[type=file]', pdfPath);
      // The browser's own encoding of the form (field order, names, filename, part headers), as it would submit it.
      const encoded = await page.evaluate<{ contentType: string; body: number[] }>(`(async () => {
        const request = new Request('http://form.invalid/', {
          method: 'POST',
          body: new FormData(document.querySelector('form')),
        });
        return {
          contentType: request.headers.get('content-type'),
          body: Array.from(new Uint8Array(await request.arrayBuffer())),
        };
      })()`);
      const body = Buffer.from(encoded.body);
      expect(encoded.contentType).toMatch(/^multipart\/form-data; boundary=/);
      expect(body.toString('latin1')).toContain('name="file"; filename="contract.pdf"');
      const res = await service.request('/documents', {
        method: 'POST',
        account,
        headers: { 'content-type': encoded.contentType },
        body,
      });
      expectIntended(res.status, await res.text());
    } finally {
      await browser.close();
    }
  });
});

function splitStatus(stdout: string): [string, number] {
  const at = stdout.lastIndexOf('\n');
  return [stdout.slice(0, at), Number(stdout.slice(at + 1))];
}
