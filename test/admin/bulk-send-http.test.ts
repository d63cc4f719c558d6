import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { csvFor } from '../bulk-sends/support.ts';
import { createDashboardAccount, csrfFrom, FormClient, type DashboardAccount } from '../helpers/dashboard.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';
import { createTemplate, type TemplateJson } from '../templates/support.ts';

/**
 * The dashboard's bulk-send upload over plain HTTP, for what a browser would not send: the multipart form's CSRF
 * token and origin are checked (nothing made when they fail), unknown parts are named, and another account's
 * template is not found. No worker: nothing here may start a send.
 */
let service: TestService;
let origin: string;
let holder: DashboardAccount;
let template: TemplateJson;

beforeAll(async () => {
  service = await startTestService({ worker: false });
  origin = service.api.url.replace('localhost', '127.0.0.1');
  holder = await createDashboardAccount(service);
  const issued = await issueApiKey(service.database.db, { accountId: holder.accountId, name: 'templates' });
  const account = {
    accountId: holder.accountId,
    authorization: `Bearer ${issued.apiKey.key}:${issued.secret}`,
  } as TestAccount;
  template = await createTemplate(service, account);
});
afterAll(() => service.close());

async function signedIn(): Promise<{ client: FormClient; csrf: string }> {
  const client = new FormClient(origin);
  await client.signIn(holder.email, holder.password);
  const page = await client.get(`/admin/templates/${template.id}/bulk-send`);
  expect(page.status).toBe(200);
  return { client, csrf: csrfFrom(await page.text()) };
}

function upload(
  client: FormClient,
  parts: [string, string][],
  options: { csv?: string; origin?: string; templateId?: string } = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of parts) form.append(name, value);
  form.append('file', new Blob([options.csv ?? csvFor(3, 700_000)], { type: 'text/csv' }), 'people.csv');
  return fetch(`${origin}/admin/templates/${options.templateId ?? template.id}/bulk-send`, {
    method: 'POST',
    redirect: 'manual',
    body: form,
    headers: {
      cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      origin: options.origin ?? origin,
    },
  });
}

const bulkSends = async () =>
  Number(
    (
      await service.database
        .db('bulk_sends')
        .where({ account_id: holder.accountId })
        .count<{ n: number }[]>({ n: '*' })
    )[0]!.n,
  );

describe('the dashboard bulk-send upload', () => {
  it('checks a file and answers its findings without making anything', async () => {
    const { client, csrf } = await signedIn();
    const res = await upload(client, [
      ['_csrf', csrf],
      ['intent', 'check'],
    ]);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('All 3 rows are valid.');
    expect(await bulkSends()).toBe(0);
  });

  it('refuses a forged or missing token and a foreign origin with 403, making nothing', async () => {
    const { client, csrf } = await signedIn();
    const send: [string, string] = ['intent', 'send'];
    expect((await upload(client, [['_csrf', 'forged'], send])).status).toBe(403);
    expect((await upload(client, [send])).status).toBe(403);
    expect((await upload(client, [['_csrf', csrf], send], { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect(await bulkSends()).toBe(0);
  });

  it('names an unknown part and a file that is not a CSV of the roles, by field, with 422', async () => {
    const { client, csrf } = await signedIn();
    const odd = await upload(client, [
      ['_csrf', csrf],
      ['intent', 'send'],
      ['__proto__', 'x'],
    ]);
    expect(odd.status).toBe(422);
    expect(await odd.text()).toContain('__proto__ is not a field of a bulk send');
    const headerless = await upload(client, [['_csrf', csrf]], { csv: 'a,b\n1,2\n' });
    expect(headerless.status).toBe(422);
    expect(await headerless.text()).toContain('The file cannot be read.');
    expect(await bulkSends()).toBe(0);
  });

  it("does not find another account's template", async () => {
    const { client, csrf } = await signedIn();
    const res = await upload(client, [['_csrf', csrf]], {
      templateId: '00000000-0000-4000-8000-000000000000',
    });
    expect(res.status).toBe(404);
  });
});
