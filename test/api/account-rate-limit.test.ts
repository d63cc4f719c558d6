import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

const PATH = '/documents/00000000-0000-4000-8000-000000000000';

interface Answer {
  status: number;
  limit: number;
  remaining: number;
  message?: string;
}

async function burst(service: TestService, key: string, n: number): Promise<Answer[]> {
  const out: Answer[] = [];
  for (let i = 0; i < n; i++) {
    const res = await service.request(PATH, { headers: { authorization: key } });
    const body = (await res.json()) as { error?: { message: string } };
    out.push({
      status: res.status,
      limit: Number(res.headers.get('x-ratelimit-limit')),
      remaining: Number(res.headers.get('x-ratelimit-remaining')),
      ...(res.status === 429 && { message: body.error?.message }),
    });
  }
  return out;
}

/** More keys of the account of `first`. */
async function keysOf(service: TestService, first: TestAccount, n: number): Promise<string[]> {
  const out = [first.authorization];
  for (let i = 1; i < n; i++) {
    const { apiKey, secret } = await issueApiKey(service.database.db, {
      accountId: first.accountId,
      name: `k${i}`,
    });
    out.push(`Bearer ${apiKey.key}:${secret}`);
  }
  return out;
}

/** A burst straddling a window boundary would see the count reset: start early in a minute. */
async function startOfMinute(): Promise<void> {
  const msIntoMinute = Date.now() % 60_000;
  if (msIntoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 50));
}

const ACCOUNT_REFUSAL =
  'Rate limit exceeded: 200 requests per minute for this account, all its API keys together (basic plan)';

describe('a ceiling per account on top of the per-key limit, in memory', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ worker: false, env: { RATE_LIMIT_ACCOUNT_MULTIPLIER: '2' } });
  });
  afterAll(() => service.close());

  it('three basic keys of one account share 200 a minute; the headers follow the closer limit', async () => {
    const [k1, k2, k3] = await keysOf(service, await service.createAccount({ plan: 'basic' }), 3);
    const other = await service.createAccount({ plan: 'basic' });
    await startOfMinute();

    const first = await burst(service, k1!, 101);
    first.slice(0, 100).forEach((a, i) => expect(a).toEqual({ status: 404, limit: 100, remaining: 99 - i }));
    expect(first[100]).toEqual({
      status: 429,
      limit: 100,
      remaining: 0,
      message: 'Rate limit exceeded: 100 requests per minute for the basic plan',
    });
    // The key's refusal did not spend the account's minute: 100 of its 200 are used.
    for (const a of await burst(service, k2!, 50)) expect(a.status).toBe(404);
    // Now the account (50 left) is closer than the third key (99 left): the headers say so.
    const third = await burst(service, k3!, 51);
    third.slice(0, 50).forEach((a, i) => expect(a).toEqual({ status: 404, limit: 200, remaining: 49 - i }));
    // The 201st request of the account is refused, whichever key sends it, though each key has requests left.
    expect(third[50]).toEqual({ status: 429, limit: 200, remaining: 0, message: ACCOUNT_REFUSAL });
    expect((await burst(service, k2!, 1))[0]).toEqual({
      status: 429,
      limit: 200,
      remaining: 0,
      message: ACCOUNT_REFUSAL,
    });
    // Another account is not touched.
    expect((await burst(service, other.authorization, 1))[0]).toEqual({
      status: 404,
      limit: 100,
      remaining: 99,
    });
  });
});

describe('a ceiling per account in PostgreSQL, across two API processes', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    const env = { RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_ACCOUNT_MULTIPLIER: '1' };
    a = await startTestService({ worker: false, env });
    b = await startTestService({ worker: false, env, database: a.database });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('two keys through two servers share one account minute of 100, each count given out once', async () => {
    const [k1, k2] = await keysOf(a, await a.createAccount({ plan: 'basic' }), 2);
    await startOfMinute();
    const [fromA, fromB] = await Promise.all([burst(a, k1!, 50), burst(b, k2!, 50)]);
    const answers = [...fromA, ...fromB];
    for (const answer of answers) expect(answer).toMatchObject({ status: 404, limit: 100 });
    expect(answers.map((x) => x.remaining).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
    for (const [via, key] of [
      [a, k2!],
      [b, k1!],
    ] as const) {
      expect((await burst(via, key, 1))[0]).toEqual({
        status: 429,
        limit: 100,
        remaining: 0,
        message:
          'Rate limit exceeded: 100 requests per minute for this account, all its API keys together (basic plan)',
      });
    }
  });
});
