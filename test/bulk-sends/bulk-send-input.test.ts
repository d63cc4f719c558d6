import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/test-service.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { createTemplate, type TemplateJson } from '../templates/support.ts';
import { created, csvFor, detailsOf, postCsv, postRows, rowsFor } from './support.ts';

/**
 * What POST /templates/{id}/bulk-sends refuses before anything is made or sent: every hostile body a clear 422 or
 * 413 in the envelope, bad rows named by number. (No worker: nothing here needs a row sent.)
 */
let service: TestService;
let account: TestAccount;
let template: TemplateJson;

beforeAll(async () => {
  service = await startTestService({
    worker: false,
    env: { BULK_SEND_MAX_ROWS: '20', BULK_SEND_MAX_MB: '0.05' },
  });
  account = await service.createAccount();
  template = await createTemplate(service, account);
});
afterAll(() => service?.close());

/** A request whose Content-Length promises `length` bytes, of which only the first few are ever sent. */
function declaredLarge(
  pathname: string,
  type: string,
  length: number,
): Promise<{ status: number; body: string }> {
  const url = new URL(`${service.baseUrl}${pathname}`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { authorization: account.authorization, 'content-type': type, 'content-length': length },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write('x'.repeat(1024));
  });
}

const rowCount = async (id: string) =>
  Number(
    (
      await service.database
        .db('bulk_send_rows')
        .where({ bulk_send_id: id })
        .count<{ n: string }[]>({ n: '*' })
    )[0]!.n,
  );
const bulkSends = async () =>
  Number(
    (
      await service.database
        .db('bulk_sends')
        .where({ account_id: account.accountId })
        .count<{ n: string }[]>({ n: '*' })
    )[0]!.n,
  );

describe('a bulk send is checked whole before anything is sent', () => {
  it('refuses a CSV with bad rows, naming each by row number (the header is not a row), and keeps nothing', async () => {
    const before = await bulkSends();
    const lines = csvFor(4).split('\n');
    lines[2] = 'Ali,12345,أ,A,966512345678'; // row 2: a phone that is no number
    lines[4] = ',966512340001,ب,B,966512340002'; // row 4: no name
    const details = await detailsOf(await postCsv(service, account, template.id, lines.join('\n')));
    expect(Object.keys(details).sort()).toEqual([
      'rows.2.employee.phone',
      'rows.4.employee.name_ar',
      'rows.4.employee.name_en',
    ]);
    expect(await bulkSends()).toBe(before);
  });

  it('with skip_invalid, reports bad rows and keeps the rest', async () => {
    const rows: unknown[] = rowsFor(3);
    rows[1] = { employee: { name: 'X', phone: 'nope' } };
    const bulk = await created(await postRows(service, account, template.id, { rows, skip_invalid: true }));
    expect(bulk.counts).toMatchObject({ rows: 3, invalid: 1, pending: 2 });
    expect(bulk.invalid_rows!.map((r) => [r.row, Object.keys(r.errors).sort()])).toEqual([
      [2, ['employee.phone', 'hr']],
    ]);
    expect(await rowCount(bulk.id)).toBe(3);
    const listed = await service.request(`/bulk-sends/${bulk.id}/rows`, { account });
    const rowsView = ((await listed.json()) as { data: { row: number; status: string; errors: unknown }[] })
      .data;
    expect(rowsView.map((r) => [r.row, r.status])).toEqual([
      [1, 'pending'],
      [2, 'invalid'],
      [3, 'pending'],
    ]);
  });

  it('reads CSV as CSV: a BOM, CRLF, quoted commas, quotes and line breaks', async () => {
    const header = '\uFEFFemployee.name,employee.phone,hr.name,hr.phone,title\r\n';
    const csv =
      header +
      '"Sara, Al-Otaibi",966512345001,"Omar ""the HR""",966512345002,Amendment\r\n' +
      'Ali,966512345003,Omar,966512345002,\r\n';
    const bulk = await created(await postCsv(service, account, template.id, csv));
    expect(bulk.counts).toMatchObject({ rows: 2, pending: 2, invalid: 0 });
    const inputs = (await service.database
      .db('bulk_send_rows')
      .where({ bulk_send_id: bulk.id })
      .orderBy('row_number')
      .pluck('input')) as { recipients: [string, { nameEn: string; phone: string }][]; titleEn?: string }[];
    expect(inputs[0]!.recipients.map(([k, r]) => [k, r.nameEn])).toEqual([
      ['employee', 'Sara, Al-Otaibi'],
      ['hr', 'Omar "the HR"'],
    ]);
    expect([inputs[0]!.titleEn, inputs[1]!.titleEn]).toEqual(['Amendment', undefined]);
    // A quoted line break stays inside its cell (one row, not two), where a title may not hold it.
    const broken = await detailsOf(
      await postCsv(
        service,
        account,
        template.id,
        `${header}A,966512345001,B,966512345002,"two\r\nlines"\r\n`,
      ),
    );
    expect(Object.keys(broken)).toEqual(['rows.1.title']);
  });

  it('refuses hostile files and bodies, each with a clear answer', async () => {
    const header = 'employee.name,employee.phone,hr.name,hr.phone';
    const cases: [string, string | Uint8Array, number, string][] = [
      [
        'a duplicate header',
        `${header},employee.phone\nA,966512345001,B,966512345002,966512345001\n`,
        422,
        'file',
      ],
      ['a __proto__ header', `__proto__,${header}\nx,A,966512345001,B,966512345002\n`, 422, 'file'],
      [
        'a constructor.name header',
        `constructor.name,${header}\nx,A,966512345001,B,966512345002\n`,
        422,
        'file',
      ],
      ['a missing phone column', 'employee.name,hr.name,hr.phone\nA,B,966512345002\n', 422, 'file'],
      [
        'bytes that are not UTF-8',
        Buffer.concat([
          Buffer.from(`${header}\n`),
          Buffer.from([0xff, 0xfe, 0x41]),
          Buffer.from(',966512345001,B,966512345002\n'),
        ]),
        422,
        'file',
      ],
      ['an unclosed quote', `${header}\n"A,966512345001,B,966512345002\n`, 422, 'file'],
      ['only a header', `${header}\n`, 422, 'file'],
      ['an empty file', '', 422, 'file'],
      ['21 rows (the limit is 20)', csvFor(21), 422, 'file'],
      [
        'a file over BULK_SEND_MAX_MB',
        `${header}\n${'A,966512345001,B,966512345002\n'.repeat(2000)}`,
        413,
        '',
      ],
    ];
    for (const [what, csv, status, field] of cases) {
      const res = await postCsv(service, account, template.id, csv);
      expect(res.status, `${what}: ${await res.clone().text()}`).toBe(status);
      const body = (await res.json()) as {
        success: boolean;
        error: { code: number; details: Record<string, string[]> };
      };
      expect(body.success, what).toBe(false);
      expect(body.error.code, what).toBe(status);
      if (field) expect(Object.keys(body.error.details), what).toContain(field);
    }
    // A row of the wrong length is that row's problem.
    const short = await detailsOf(
      await postCsv(service, account, template.id, `${header}\nA,966512345001,B\n`),
    );
    expect(Object.keys(short)).toEqual(['rows.1']);
  });

  it('refuses hostile JSON: prototype keys as roles, unknown roles, too many rows, a huge body, not UTF-8', async () => {
    const proto = await detailsOf(
      await postRows(
        service,
        account,
        template.id,
        `{"rows":[{"__proto__":{"name":"x","phone":"966512345001"},"employee":{"name":"A","phone":"966512345002"},"hr":{"name":"B","phone":"966512345003"}}]}`,
      ),
    );
    expect(Object.keys(proto)).toEqual(['rows.1.__proto__']);
    const ctor = await detailsOf(
      await postRows(service, account, template.id, {
        rows: [{ ...rowsFor(1)[0], constructor: { name: 'x' } }],
      }),
    );
    expect(Object.keys(ctor)).toEqual(['rows.1.constructor']);
    expect(
      Object.keys(await detailsOf(await postRows(service, account, template.id, { rows: rowsFor(21) }))),
    ).toEqual(['rows']);
    expect(Object.keys(await detailsOf(await postRows(service, account, template.id, { rows: [] })))).toEqual(
      ['rows'],
    );
    expect(
      Object.keys(await detailsOf(await postRows(service, account, template.id, { rows: 'x' }))),
    ).toEqual(['rows']);
    expect(
      Object.keys(await detailsOf(await postRows(service, account, template.id, { rows: [1] }))),
    ).toEqual(['rows.1']);
    const big = await postRows(
      service,
      account,
      template.id,
      JSON.stringify({ rows: [{ pad: 'x'.repeat(60_000) }] }),
    );
    expect(big.status).toBe(413);
    const latin1 = await service.request(`/templates/${template.id}/bulk-sends`, {
      method: 'POST',
      account,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect(Object.keys(await detailsOf(latin1))).toEqual(['body']);
  });

  it('refuses a body declared as 100 MB with 413 at once, reading a few bytes of it', async () => {
    for (const type of ['multipart/form-data; boundary=x', 'application/json']) {
      const { status, body } = await declaredLarge(
        `/templates/${template.id}/bulk-sends`,
        type,
        100 * 1024 * 1024,
      );
      expect(status, type).toBe(413);
      expect(JSON.parse(body), type).toMatchObject({ success: false, error: { code: 413 } });
    }
  });
});
