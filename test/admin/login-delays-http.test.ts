import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { totpCode } from '../../src/auth/totp.ts';
import { createDashboardAccount, csrfFrom, FormClient } from '../helpers/dashboard.ts';
import { enrolTotp } from '../helpers/second-factor.ts';

/**
 * Sign-in delays over plain HTTP, against the real service. The dashboard's clock is played forward by the
 * test (no sleeping); clients connect from different loopback addresses (127.0.0.x) so the service sees them
 * as different addresses, as it would see an attacker's machines and the account holder's.
 */

let service: TestService;
let origin: string;
let clock = new Date();
const clients: FormClient[] = [];

beforeAll(async () => {
  service = await startTestService({ now: () => clock });
  origin = service.api.url;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await service?.close();
});

const wait = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};

/** A client with the sign-in form loaded (its login token cookie and field), connecting from `localAddress`. */
async function loginClient(localAddress = '127.0.0.1') {
  const client = new FormClient(origin, { localAddress });
  clients.push(client);
  const token = csrfFrom(await (await client.get('/admin/login')).text());
  return {
    client,
    signIn: (email: string, password: string) =>
      client.post('/admin/login', { _csrf: token, email, password }),
    code: (code: string) => client.post('/admin/login/code', { _csrf: token, code }),
  };
}

/** An account with two-step sign-in on; the code that confirmed it is spent, so the clock moves a step on. */
async function enrolledHolder() {
  const holder = await createDashboardAccount(service);
  const browser = new FormClient(origin, { localAddress: '127.0.0.1' });
  clients.push(browser);
  const { secret } = await enrolTotp(browser, await browser.signIn(holder.email, holder.password), clock);
  wait(30_000);
  return { ...holder, secret };
}

describe('dashboard sign-in delays over HTTP', () => {
  it('answers an attempt inside the wait with 429 and Retry-After, right password or not; after the wait the right one signs in', async () => {
    const holder = await createDashboardAccount(service);
    const { client, signIn } = await loginClient();

    const failures: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await signIn(holder.email, `wrong-${i}`);
      expect(res.status).toBe(401);
      expect(res.headers.get('retry-after')).toBeNull();
      failures.push(await res.text());
    }
    expect(failures[0]).toContain('The email or password is incorrect.');
    expect(failures[1]).toContain('Failed attempts left before each further attempt has to wait: 1.');
    expect(failures[2]).toContain('Seconds to wait before the next attempt: 1.');

    // Inside the wait the password is not looked at: the right one and a wrong one get the same answer.
    for (const password of [holder.password, 'wrong-again']) {
      const refused = await signIn(holder.email, password);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      const page = await refused.text();
      expect(page).toContain('Seconds to wait before the next attempt: 1.');
      expect(page).not.toContain('The email or password is incorrect.');
    }
    expect(client.cookies.has('wathiq_admin_session')).toBe(false);

    wait(1000);
    const signedIn = await signIn(holder.email, holder.password);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/admin');
    expect(client.cookies.has('wathiq_admin_session')).toBe(true);
  });

  it("does not let an attacker's failures from other addresses lock the account holder out", async () => {
    const holder = await createDashboardAccount(service);
    const attackers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => loginClient(`127.0.0.${i + 2}`)),
    );

    // Three minutes of guessing, one try a second from one of ten addresses.
    const statuses = new Map<number, number>();
    for (let i = 0; i < 180; i++) {
      const res = await attackers[i % attackers.length]!.signIn(holder.email, `guess-${i}`);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      await res.arrayBuffer();
      wait(1000);
    }
    // Only one guess per wait got as far as the password: 3 free, then after waits of 1 … 32 s, then 60 s.
    expect(statuses.get(401)).toBe(10);
    expect(statuses.get(429)).toBe(170);
    const seen = await service.database
      .db('login_attempts')
      .whereIn('bucket', ['ip:127.0.0.2', 'ip:127.0.0.11'])
      .pluck('bucket');
    expect(seen.sort()).toEqual(['ip:127.0.0.11', 'ip:127.0.0.2']);

    // The holder, from their own address, is told how long to wait (at most the 60 s cap) and then gets in.
    const { client, signIn } = await loginClient('127.0.0.1');
    const first = await signIn(holder.email, holder.password);
    expect(first.status).toBe(429);
    const retryAfter = Number(first.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    wait(retryAfter * 1000);
    const second = await signIn(holder.email, holder.password);
    expect(second.status).toBe(303);
    expect(client.cookies.has('wathiq_admin_session')).toBe(true);
  });

  it('slows one address after 20 failures over 20 emails: the 21st attempt waits, right password or not', async () => {
    const holder = await createDashboardAccount(service);
    const { signIn } = await loginClient('127.0.0.20');
    for (let i = 0; i < 20; i++) {
      const res = await signIn(`sprayed-${i}-${holder.email}`, 'wrong-password');
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
    const refused = await signIn(holder.email, holder.password);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    // Another address is not slowed by this one.
    expect((await (await loginClient('127.0.0.23')).signIn(holder.email, holder.password)).status).toBe(303);

    wait(1000);
    expect((await signIn(holder.email, holder.password)).status).toBe(303);
  });

  it('second step: after 5 wrong codes the 6th waits, right code or not, across new sign-ins; then it signs in', async () => {
    const holder = await enrolledHolder();
    const { signIn, code } = await loginClient('127.0.0.21');
    expect((await signIn(holder.email, holder.password)).headers.get('location')).toBe('/admin/login/code');
    const pages: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await code(String(100000 + i));
      expect(res.status).toBe(401);
      pages.push(await res.text());
    }
    expect(pages[3]).toContain('Failed attempts left before each further attempt has to wait: 1.');
    expect(pages[4]).toContain('Seconds to wait before the next attempt: 1.');

    const refused = await code(totpCode(holder.secret, clock));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.text()).not.toContain('That code is not right.');

    // Entering the password again starts a new sign-in, not a new count of codes; nor does another address.
    const other = await loginClient('127.0.0.24');
    expect((await other.signIn(holder.email, holder.password)).status).toBe(303);
    expect((await other.code(totpCode(holder.secret, clock))).status).toBe(429);

    wait(1000);
    const accepted = await code(totpCode(holder.secret, clock));
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/admin');
  });

  it("counts the second step's wrong codes on the address too", async () => {
    const holder = await enrolledHolder();
    const { signIn, code } = await loginClient('127.0.0.22');
    for (let i = 0; i < 19; i++)
      await (await signIn(`other-${i}-${holder.email}`, 'wrong-password')).arrayBuffer();
    // The right password gives its attempt back; one wrong code is the address's 20th failure.
    expect((await signIn(holder.email, holder.password)).status).toBe(303);
    expect((await code('999999')).status).toBe(401);
    expect((await signIn(`one-more-${holder.email}`, 'wrong-password')).status).toBe(429);
  });
});
