import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/totp.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { createDashboardAccount, csrfFrom, FormClient, type DashboardAccount } from '../helpers/dashboard.ts';
import { enrolTotp, passwordStep, recoveryCodesFrom, setupKeyFrom } from '../helpers/second-factor.ts';

/**
 * Two-step sign-in over plain HTTP against the real service. The dashboard's clock is held by the test, on a
 * 30-second step boundary, so the codes a phone would show are computed for known moments. Each test starts an
 * hour after the previous one, so the sign-in counters of one (kept per address) are forgotten by the next.
 */

let service: TestService;
let origin: string;
let T0 = new Date('2026-05-01T10:00:00Z');
let clock = T0;
const clients: FormClient[] = [];

beforeEach(() => {
  T0 = new Date(T0.getTime() + 3600_000);
  clock = T0;
});

beforeAll(async () => {
  service = await startTestService({ worker: false, now: () => clock });
  origin = service.api.url;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await service?.close();
});

const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const db = () => service.database.db;

interface TotpRow {
  secret_sealed: string;
  confirmed_at: Date | null;
}
const totpRow = (accountId: string) =>
  db()('account_totp').where({ account_id: accountId }).first<TotpRow | undefined>();

function client(localAddress?: string): FormClient {
  const c = new FormClient(origin, localAddress ? { localAddress } : {});
  clients.push(c);
  return c;
}

/** A new account with two-step sign-in on, enrolled at `enrolledAt`; its holder signed out. */
async function enrolledHolder(enrolledAt: Date) {
  clock = enrolledAt;
  const holder = await createDashboardAccount(service);
  const browser = client();
  const csrf = await browser.signIn(holder.email, holder.password);
  const enrolment = await enrolTotp(browser, csrf, enrolledAt);
  return { holder, ...enrolment };
}

/** Password, then code, from a fresh client: the code step's answer and the client. */
async function signInWithCode(holder: DashboardAccount, code: string, localAddress?: string) {
  const c = client(localAddress);
  const { res, token } = await passwordStep(c, holder.email, holder.password);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/admin/login/code');
  const answer = await c.post('/admin/login/code', { _csrf: token, code });
  return { answer, client: c, token };
}

describe('enrolment', () => {
  it('shows a QR code and key, takes effect only after a valid code, and shows 10 recovery codes once', async () => {
    clock = at(0);
    const holder = await createDashboardAccount(service);
    const browser = client();
    const csrf = await browser.signIn(holder.email, holder.password);

    const off = await (await browser.get('/admin/security')).text();
    expect(off).toContain('Two-step sign-in is off.');
    expect((await browser.post('/admin/security/totp/start', { _csrf: csrf })).status).toBe(303);

    const pendingRes = await browser.get('/admin/security');
    // The dashboard's headers and rules hold on the page that carries the secret: strict CSP, no caching, no
    // inline script, style or handler.
    expect(pendingRes.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(pendingRes.headers.get('cache-control')).toBe('no-store');
    expect(pendingRes.headers.get('x-frame-options')).toBe('DENY');
    const pending = await pendingRes.text();
    expect(pending).not.toMatch(/<script>|<style>| on\w+="| style="|data:/);
    const secret = setupKeyFrom(pending);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits
    expect(pending).toMatch(/<svg\s+id="totp-qr"[^>]*role="img"/);
    expect(pending).toContain('Not on yet');
    // The secret is stored sealed for this account only.
    const row = (await totpRow(holder.accountId))!;
    expect(row.secret_sealed).toMatch(/^wqs1\./);
    expect(row.secret_sealed).not.toContain(secret);
    expect(row.confirmed_at).toBeNull();
    expect(service.deps.secrets.open(row.secret_sealed, `account_totp.secret:${holder.accountId}`)).toBe(
      secret,
    );
    const other = await service.createAccount();
    expect(() =>
      service.deps.secrets.open(row.secret_sealed, `account_totp.secret:${other.accountId}`),
    ).toThrow(/failed authentication/);

    // Not in force yet: the password alone still signs in.
    const meanwhile = await passwordStep(client(), holder.email, holder.password);
    expect(meanwhile.res.headers.get('location')).toBe('/admin');

    const wrong = await browser.post('/admin/security/totp/confirm', {
      _csrf: csrf,
      code: totpCode(secret, at(-90)),
    });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toContain('That code is not right.');
    expect((await totpRow(holder.accountId))!.confirmed_at).toBeNull();

    const confirmed = await browser.post('/admin/security/totp/confirm', {
      _csrf: csrf,
      code: totpCode(secret, clock),
    });
    expect(confirmed.status).toBe(200);
    const page = await confirmed.text();
    const codes = recoveryCodesFrom(page);
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[A-HJ-NP-Z2-9]{4}(-[A-HJ-NP-Z2-9]{4}){3}$/);
    expect(new Set(codes).size).toBe(10);

    // Stored only as hashes; never shown again.
    const stored = await db()('account_recovery_codes').where({ account_id: holder.accountId });
    expect(stored).toHaveLength(10);
    const dump = JSON.stringify(stored);
    for (const code of codes) {
      expect(dump).not.toContain(code);
      expect(dump).not.toContain(code.replace(/-/g, ''));
    }
    const after = await (await browser.get('/admin/security')).text();
    for (const code of codes) expect(after).not.toContain(code);
    expect(after).not.toContain(secret.slice(0, 8));
    expect(after).toMatch(/id="recovery-left">10</);

    // Starting again while it is on changes nothing.
    await browser.post('/admin/security/totp/start', { _csrf: csrf });
    const kept = (await totpRow(holder.accountId))!;
    expect(kept).toMatchObject({ secret_sealed: row.secret_sealed });
    expect(kept.confirmed_at).not.toBeNull();
  });

  it('ends the account’s other sessions when it is turned on (they were opened with the password alone)', async () => {
    const holder = await createDashboardAccount(service);
    const elsewhere = client();
    await elsewhere.signIn(holder.email, holder.password);
    const browser = client();
    await enrolTotp(browser, await browser.signIn(holder.email, holder.password), clock);
    expect((await elsewhere.get('/admin/api')).headers.get('location')).toBe(
      '/admin/login?next=%2Fadmin%2Fapi&m=expired',
    );
    expect((await browser.get('/admin/api')).status).toBe(200);
  });

  it('refuses the security forms without the session’s CSRF token or from another origin (403)', async () => {
    clock = at(0);
    const holder = await createDashboardAccount(service);
    const browser = client();
    const csrf = await browser.signIn(holder.email, holder.password);
    for (const path of ['/admin/security/totp/start', '/admin/security/totp/disable']) {
      expect((await browser.post(path, { _csrf: 'x'.repeat(43) })).status).toBe(403);
      expect((await browser.post(path, { _csrf: csrf }, { origin: 'https://evil.example' })).status).toBe(
        403,
      );
    }
    expect(await db()('account_totp').where({ account_id: holder.accountId })).toEqual([]);
  });
});

describe('sign-in with a code', () => {
  it('asks for a code after the password; the half-signed-in browser reaches nothing', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    const c = client();
    const { res, token } = await passwordStep(c, holder.email, holder.password);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/login/code');
    expect(c.cookies.has('wathiq_admin_session')).toBe(false);
    const challenge = c.cookies.get('wathiq_admin_challenge');
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    for (const path of ['/admin', '/admin/api', '/admin/security']) {
      const page = await c.get(path);
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toMatch(/^\/admin\/login/);
    }
    // Nor does the challenge token work as a session cookie.
    const forged = await fetch(`${origin}/admin/api`, {
      redirect: 'manual',
      headers: { cookie: `wathiq_admin_session=${challenge}` },
    });
    expect(forged.status).toBe(303);
    expect(
      (await c.post('/admin/api/keys', { _csrf: token, name: 'x', scopes: 'documents:read' })).status,
    ).toBe(303);

    const form = await c.get('/admin/login/code');
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('autocomplete="one-time-code"');

    const answer = await c.post('/admin/login/code', { _csrf: token, code: totpCode(secret, clock) });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/admin');
    expect(c.cookies.has('wathiq_admin_session')).toBe(true);
    expect(c.cookies.has('wathiq_admin_challenge')).toBe(false);
    expect((await c.get('/admin/api')).status).toBe(200);
    expect(await db()('admin_login_challenges').where({ account_id: holder.accountId })).toEqual([]);
  });

  it('returns to the page asked for before sign-in', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    const c = client();
    const token = csrfFrom(await (await c.get('/admin/login?next=/admin/security')).text());
    await c.post('/admin/login', {
      _csrf: token,
      email: holder.email,
      password: holder.password,
      next: '/admin/security',
    });
    const answer = await c.post('/admin/login/code', { _csrf: token, code: totpCode(secret, clock) });
    expect(answer.headers.get('location')).toBe('/admin/security');
  });

  it('refuses a wrong code, and a well-formed code of another moment, with 401 and no session', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    for (const code of [
      totpCode(secret, at(60 + 120)),
      '000000',
      'ZZZZ-ZZZZ-ZZZZ-ZZZZ',
      '١٢٣',
      '😀😀😀😀😀😀',
    ]) {
      const { answer, client: c } = await signInWithCode(holder, code);
      expect(answer.status).toBe(401);
      expect(await answer.text()).toContain('That code is not right.');
      expect(c.cookies.has('wathiq_admin_session')).toBe(false);
    }
  });

  it('refuses a code already used (replay), and any older one, until the next step', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(90);
    const code = totpCode(secret, clock);
    expect((await signInWithCode(holder, code)).answer.status).toBe(303);

    const replay = await signInWithCode(holder, code);
    expect(replay.answer.status).toBe(401);
    expect(await replay.answer.text()).toContain('That code has already been used.');
    // The previous step's code is within the skew window but older than the one used: refused too.
    expect((await signInWithCode(holder, totpCode(secret, at(60)))).answer.status).toBe(401);

    clock = at(120);
    expect((await signInWithCode(holder, totpCode(secret, clock))).answer.status).toBe(303);
  });

  it('lets exactly one of two simultaneous sign-ins with the same code through', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    const code = totpCode(secret, clock);
    const ready = await Promise.all(
      [client(), client()].map(async (c) => ({
        c,
        ...(await passwordStep(c, holder.email, holder.password)),
      })),
    );
    const answers = await Promise.all(
      ready.map(({ c, token }) => c.post('/admin/login/code', { _csrf: token, code })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 401]);
  });

  it('accepts a phone one step off either way, and no more', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(300);
    expect((await signInWithCode(holder, totpCode(secret, at(300 - 60)))).answer.status).toBe(401);
    expect((await signInWithCode(holder, totpCode(secret, at(300 - 30)))).answer.status).toBe(303);
    clock = at(400);
    expect((await signInWithCode(holder, totpCode(secret, at(400 + 60)))).answer.status).toBe(401);
    expect((await signInWithCode(holder, totpCode(secret, at(400 + 30)))).answer.status).toBe(303);
  });

  it('reads a code typed with spaces or in Arabic-Indic digits', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    const code = totpCode(secret, clock);
    const arabic = [...code].map((d) => String.fromCodePoint(0x0660 + Number(d))).join('');
    expect((await signInWithCode(holder, arabic)).answer.status).toBe(303);
    clock = at(90);
    const spaced = totpCode(secret, clock).replace(/^(\d{3})/, '$1 ');
    expect((await signInWithCode(holder, spaced)).answer.status).toBe(303);
  });

  it('signs in with a recovery code once (in any case, with or without hyphens), never twice', async () => {
    const { holder, recoveryCodes } = await enrolledHolder(at(0));
    clock = at(60);
    const [first] = recoveryCodes;
    const typed = first!.toLowerCase().replace(/-/g, ' ');
    expect((await signInWithCode(holder, typed)).answer.status).toBe(303);
    const again = await signInWithCode(holder, first!);
    expect(again.answer.status).toBe(401);
    expect(await again.answer.text()).toContain('That code is not right.');
    const left = await db()('account_recovery_codes')
      .where({ account_id: holder.accountId })
      .whereNull('used_at');
    expect(left).toHaveLength(9);

    const signedIn = (await signInWithCode(holder, recoveryCodes[1]!)).client;
    expect(await (await signedIn.get('/admin/security')).text()).toMatch(/id="recovery-left">8</);
  });

  it('answers a missing, oversized or repeated code field with 422, and a form from elsewhere with 403', async () => {
    const { holder } = await enrolledHolder(at(0));
    clock = at(60);
    const c = client();
    const { token } = await passwordStep(c, holder.email, holder.password);
    const bad: Record<string, string | string[]>[] = [
      {},
      { code: '' },
      { code: '1'.repeat(65) },
      { code: ['123456', '654321'] },
    ];
    for (const fields of bad) {
      const res = await c.post('/admin/login/code', { _csrf: token, ...fields });
      expect(res.status).toBe(422);
      expect(await res.text()).toContain('Enter the code.');
    }
    // A field named __proto__ is a field like any other, not the code.
    const proto = JSON.parse(`{"__proto__": "123456", "_csrf": "${token}"}`) as Record<string, string>;
    expect((await c.post('/admin/login/code', proto)).status).toBe(422);
    expect((await c.post('/admin/login/code', { _csrf: 'x'.repeat(43), code: '123456' })).status).toBe(403);
    expect(
      (
        await c.post(
          '/admin/login/code',
          { _csrf: token, code: '123456' },
          { origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);
  });

  it('gives the code 5 minutes after the password; later, the password again', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(600);
    const c = client();
    const { token } = await passwordStep(c, holder.email, holder.password);
    clock = new Date(at(600).getTime() + 5 * 60_000);
    const late = await c.post('/admin/login/code', { _csrf: token, code: totpCode(secret, clock) });
    expect(late.status).toBe(303);
    expect(late.headers.get('location')).toBe('/admin/login?m=code_expired');
    expect(c.cookies.has('wathiq_admin_session')).toBe(false);
    expect(await (await c.get('/admin/login?m=code_expired')).text()).toContain('The sign-in took too long.');
    expect((await c.get('/admin/login/code')).headers.get('location')).toBe('/admin/login?m=code_expired');

    const d = client();
    const second = await passwordStep(d, holder.email, holder.password);
    clock = new Date(clock.getTime() + 5 * 60_000 - 1);
    expect(
      (await d.post('/admin/login/code', { _csrf: second.token, code: totpCode(secret, clock) })).status,
    ).toBe(303);
  });
});

describe('turning it off', () => {
  it('needs a current code or the password; wrong ones change nothing', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    const { client: c } = await signInWithCode(holder, totpCode(secret, clock));
    const csrf = csrfFrom(await (await c.get('/admin/security')).text());

    const none = await c.post('/admin/security/totp/disable', { _csrf: csrf });
    expect(none.status).toBe(422);
    expect(await none.text()).toContain('Enter a current code or your password.');
    const wrongCode = await c.post('/admin/security/totp/disable', {
      _csrf: csrf,
      code: totpCode(secret, at(600)),
    });
    expect(wrongCode.status).toBe(401);
    // The code just used to sign in is spent.
    const replayed = await c.post('/admin/security/totp/disable', {
      _csrf: csrf,
      code: totpCode(secret, at(60)),
    });
    expect(replayed.status).toBe(401);
    expect(await replayed.text()).toContain('That code has already been used.');
    const wrongPassword = await c.post('/admin/security/totp/disable', {
      _csrf: csrf,
      password: 'not-the-password',
    });
    expect(wrongPassword.status).toBe(401);
    expect(await wrongPassword.text()).toContain('The password is incorrect.');
    expect(await db()('account_totp').where({ account_id: holder.accountId })).toHaveLength(1);

    clock = at(90);
    const off = await c.post('/admin/security/totp/disable', { _csrf: csrf, code: totpCode(secret, clock) });
    expect(off.status).toBe(303);
    expect(off.headers.get('location')).toBe('/admin/security?m=second_factor_off');
    expect(await (await c.get('/admin/security?m=second_factor_off')).text()).toContain(
      'Two-step sign-in is off:',
    );
    expect(await db()('account_totp').where({ account_id: holder.accountId })).toEqual([]);
    expect(await db()('account_recovery_codes').where({ account_id: holder.accountId })).toEqual([]);
    expect((await passwordStep(client(), holder.email, holder.password)).res.headers.get('location')).toBe(
      '/admin',
    );
  });

  it('takes the password instead of a code', async () => {
    const { holder, secret } = await enrolledHolder(at(0));
    clock = at(60);
    const { client: c } = await signInWithCode(holder, totpCode(secret, clock));
    const csrf = csrfFrom(await (await c.get('/admin/security')).text());
    const off = await c.post('/admin/security/totp/disable', { _csrf: csrf, password: holder.password });
    expect(off.status).toBe(303);
    expect(await db()('account_totp').where({ account_id: holder.accountId })).toEqual([]);
  });
});
