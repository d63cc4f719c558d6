import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import { createAdminDashboard } from '../../src/admin/dashboard.ts';
import type { AppState } from '../../src/http/context.ts';
import { errorHandler } from '../../src/api/middleware/error-handler.ts';
import { requestId } from '../../src/api/middleware/request-id.ts';
import type { Knex } from '../../src/db/knex.ts';
import { sha256Hex } from '../../src/auth/tokens.ts';
import { apiKeysStore } from '../../src/features/accounts/api-keys-store.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { createDashboardAccount, csrfFrom, FormClient, type DashboardAccount } from '../helpers/dashboard.ts';

let service: TestService;
let origin: string;
let holder: DashboardAccount;

beforeAll(async () => {
  service = await startTestService({ worker: false });
  origin = service.api.url.replace('localhost', '127.0.0.1');
  holder = await createDashboardAccount(service);
});
afterAll(() => service.close());

async function signedIn(account = holder): Promise<{ client: FormClient; csrf: string }> {
  const client = new FormClient(origin);
  const csrf = await client.signIn(account.email, account.password);
  return { client, csrf };
}

describe('pages and headers', () => {
  it('serves the login page as HTML with the security headers', async () => {
    const res = await new FormClient(origin).get('/admin/login');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = await res.text();
    expect(body).toMatch(/^<!doctype html>\s*<html lang="en" dir="ltr">/);
    expect(body).not.toMatch(/<script>|<style>| on\w+="/); // no inline script, style or handlers
  });

  it('sets the login token cookie HttpOnly, SameSite=Strict, Path=/admin', async () => {
    const res = await new FormClient(origin).get('/admin/login');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('wathiq_admin_login='));
    expect(cookie).toMatch(/; Path=\/admin; HttpOnly; SameSite=Strict/);
    expect(cookie).not.toContain('Secure'); // plain http, PUBLIC_BASE_URL http
  });

  it('redirects pages behind sign-in to the login page, remembering where to return', async () => {
    for (const path of ['/admin', '/admin/api', '/admin/documents/00000000-0000-4000-8000-000000000000']) {
      const res = await new FormClient(origin).get(path);
      expect(res.status).toBe(303);
      const location = res.headers.get('location') ?? '';
      expect(location.startsWith('/admin/login')).toBe(true);
      if (path !== '/admin') expect(new URL(location, origin).searchParams.get('next')).toBe(path);
    }
  });

  it('answers unknown dashboard paths with an HTML 404, and leaves other paths to the API', async () => {
    const res = await new FormClient(origin).get('/admin/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('Not found');
    const api = await fetch(`${origin}/administrator`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as { success: boolean }).success).toBe(false);
  });

  it('answers a method a page does not accept with an HTML 405', async () => {
    const res = await fetch(`${origin}/admin/login`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('content-type')).toContain('text/html');
  });

  it('serves its stylesheet and script, cacheable when versioned', async () => {
    const page = await (await new FormClient(origin).get('/admin/login')).text();
    const css = /href="(\/admin\/assets\/admin\.css\?v=[0-9a-f]+)"/.exec(page)?.[1];
    const js = /src="(\/admin\/assets\/admin\.js\?v=[0-9a-f]+)"/.exec(page)?.[1];
    const cssRes = await fetch(`${origin}${css}`);
    expect(cssRes.status).toBe(200);
    expect(cssRes.headers.get('content-type')).toContain('text/css');
    expect(cssRes.headers.get('cache-control')).toContain('immutable');
    const jsRes = await fetch(`${origin}${js}`);
    expect(jsRes.headers.get('content-type')).toContain('text/javascript');
    expect((await fetch(`${origin}/admin/assets/nope.js`)).status).toBe(404);
  });

  it('picks Arabic from ?lang=ar, remembers it, and sets dir="rtl"', async () => {
    const client = new FormClient(origin);
    const first = await client.get('/admin/login?lang=ar');
    expect(await first.text()).toMatch(/<html lang="ar" dir="rtl">/);
    expect(client.cookies.get('wathiq_admin_lang')).toBe('ar');
    const again = await client.get('/admin/login');
    expect(await again.text()).toMatch(/<html lang="ar" dir="rtl">/);
    const browserArabic = await new FormClient(origin).get('/admin/login', {
      'accept-language': 'ar-SA,ar;q=0.9',
    });
    expect(await browserArabic.text()).toMatch(/<html lang="ar" dir="rtl">/);
    const bogus = await new FormClient(origin).get('/admin/login?lang=<script>');
    expect(await bogus.text()).toMatch(/<html lang="en" dir="ltr">/);
  });
});

describe('signing in', () => {
  it('signs in, stores only a hash of the session token, and signs out', async () => {
    const client = new FormClient(origin);
    const form = await client.get('/admin/login');
    const res = await client.post('/admin/login', {
      _csrf: csrfFrom(await form.text()),
      email: holder.email.toUpperCase(),
      password: holder.password,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('wathiq_admin_session='))!;
    expect(cookie).toMatch(/; Path=\/admin; HttpOnly; SameSite=Strict$/);
    const token = client.cookies.get('wathiq_admin_session')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const rows = await service.database.db('admin_sessions').where({ account_id: holder.accountId });
    expect(rows.map((r: { id_hash: string }) => r.id_hash)).toContain(sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);

    const home = await client.get('/admin');
    expect(home.status).toBe(200);
    const csrf = csrfFrom(await home.text());
    const out = await client.post('/admin/logout', { _csrf: csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/admin/login?m=signed_out');
    expect(await service.database.db('admin_sessions').where({ id_hash: sha256Hex(token) })).toEqual([]);
    // The old cookie, replayed, is worth nothing.
    const replay = await fetch(`${origin}/admin`, {
      redirect: 'manual',
      headers: { cookie: `wathiq_admin_session=${token}` },
    });
    expect(replay.status).toBe(303);
  });

  it('marks the session cookie Secure when PUBLIC_BASE_URL is https', async () => {
    const https = await startTestService({
      worker: false,
      env: { PUBLIC_BASE_URL: 'https://wathiq.example' },
    });
    try {
      const account = await createDashboardAccount(https);
      const client = new FormClient(https.api.url);
      const form = await client.get('/admin/login');
      expect(form.headers.getSetCookie().join('\n')).toMatch(/wathiq_admin_login=.*; Secure/);
      const res = await client.post('/admin/login', {
        _csrf: csrfFrom(await form.text()),
        email: account.email,
        password: account.password,
      });
      expect(res.status).toBe(303);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('wathiq_admin_session='));
      expect(cookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    } finally {
      await https.close();
    }
  });

  it('says "incorrect" for a wrong password and for an unknown email alike', async () => {
    const client = new FormClient(origin);
    const token = csrfFrom(await (await client.get('/admin/login')).text());
    const wrong = await client.post('/admin/login', {
      _csrf: token,
      email: holder.email,
      password: 'nope-nope',
    });
    const unknown = await client.post('/admin/login', {
      _csrf: token,
      email: 'nobody@example.test',
      password: 'nope-nope',
    });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      const body = await res.text();
      expect(body).toContain('The email or password is incorrect.');
      expect(body).not.toContain('nope-nope');
    }
  });

  it('asks for both fields, and survives odd input without a 500', async () => {
    const client = new FormClient(origin);
    const token = csrfFrom(await (await client.get('/admin/login')).text());
    const empty = await client.post('/admin/login', { _csrf: token, email: '', password: '' });
    expect(empty.status).toBe(422);
    expect(await empty.text()).toContain('Enter your email and password.');
    const odd = await client.post('/admin/login', {
      _csrf: token,
      email: `"><script>alert(1)</script>${'x'.repeat(400)}`,
      password: 'x',
    });
    expect(odd.status).toBe(422);
    const oddBody = await odd.text();
    expect(oddBody).not.toContain('<script>alert(1)');
    expect(oddBody).toContain('&lt;script&gt;');
    const arrays = await client.post('/admin/login', {
      _csrf: token,
      email: ['a@b.c', 'd@e.f'],
      password: 'x',
    });
    expect(arrays.status).toBe(422);
  });

  it('refuses a login post without the login token, or from another origin (403)', async () => {
    const client = new FormClient(origin);
    const token = csrfFrom(await (await client.get('/admin/login')).text());
    const fields = { email: holder.email, password: holder.password };
    expect((await client.post('/admin/login', fields)).status).toBe(403);
    expect((await client.post('/admin/login', { ...fields, _csrf: 'forged' })).status).toBe(403);
    expect(
      (await client.post('/admin/login', { ...fields, _csrf: token }, { origin: 'https://evil.example' }))
        .status,
    ).toBe(403);
    expect((await client.post('/admin/login', { ...fields, _csrf: token }, { origin: null })).status).toBe(
      403,
    );
    const stranger = new FormClient(origin); // no login cookie at all
    expect((await stranger.post('/admin/login', { ...fields, _csrf: token })).status).toBe(403);
  });

  it('does not redirect anywhere but the dashboard after signing in', async () => {
    for (const next of ['https://evil.example/', '//evil.example', '/admin/../../evil', '/api/v1/health']) {
      const client = new FormClient(origin);
      const token = csrfFrom(
        await (await client.get(`/admin/login?next=${encodeURIComponent(next)}`)).text(),
      );
      const res = await client.post('/admin/login', {
        _csrf: token,
        email: holder.email,
        password: holder.password,
        next,
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toMatch(/^\/admin/);
      expect(res.headers.get('location')).not.toContain('evil');
    }
  });

  it('ends a session after it has been idle too long, then returns to the page asked for', async () => {
    const { client } = await signedIn();
    const token = client.cookies.get('wathiq_admin_session')!;
    await service.database
      .db('admin_sessions')
      .where({ id_hash: sha256Hex(token) })
      .update({ last_seen_at: new Date(Date.now() - 31 * 60_000) });
    const res = await client.get('/admin/api');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/login?next=%2Fadmin%2Fapi&m=expired');
    expect(await service.database.db('admin_sessions').where({ id_hash: sha256Hex(token) })).toEqual([]);
    const login = await client.get(res.headers.get('location')!);
    const page = await login.text();
    expect(page).toContain('Your session has ended');
    const back = await client.post('/admin/login', {
      _csrf: csrfFrom(page),
      email: holder.email,
      password: holder.password,
      next: '/admin/api',
    });
    expect(back.headers.get('location')).toBe('/admin/api');
  });

  it('ends a session at its absolute expiry, however busy', async () => {
    const { client } = await signedIn();
    const token = client.cookies.get('wathiq_admin_session')!;
    await service.database
      .db('admin_sessions')
      .where({ id_hash: sha256Hex(token) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const res = await client.post('/admin/api/keys', { _csrf: 'whatever', name: 'late' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/login?m=expired');
  });

  it('treats a garbage session cookie as no session', async () => {
    for (const cookie of ['wathiq_admin_session=garbage', `wathiq_admin_session=${'A'.repeat(43)}`]) {
      const res = await fetch(`${origin}/admin`, { redirect: 'manual', headers: { cookie } });
      expect(res.status).toBe(303);
    }
  });
});

describe('API keys over plain HTTP', () => {
  it('refuses a POST without the CSRF token, with a forged one, or from another origin (403)', async () => {
    const { client, csrf } = await signedIn();
    const before = await apiKeysStore(service.database.db).listByAccount(holder.accountId);
    const fields = { name: 'csrf probe', scopes: 'documents:read' };
    const attempts = [
      await client.post('/admin/api/keys', fields),
      await client.post('/admin/api/keys', { ...fields, _csrf: '' }),
      await client.post('/admin/api/keys', {
        ...fields,
        _csrf: csrf.slice(0, -1) + (csrf.endsWith('A') ? 'B' : 'A'),
      }),
      await client.post('/admin/api/keys', { ...fields, _csrf: csrf }, { origin: 'https://evil.example' }),
      await client.post('/admin/api/keys', { ...fields, _csrf: csrf }, { origin: null }),
      await client.post(
        '/admin/api/keys',
        { ...fields, _csrf: csrf },
        { origin: null, headers: { referer: 'https://evil.example/page' } },
      ),
      await client.post(
        '/admin/api/keys',
        { ...fields, _csrf: csrf },
        { headers: { 'sec-fetch-site': 'cross-site' } },
      ),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('This form has expired or did not come from this dashboard');
    }
    // A JSON body carries no form token either.
    const json = await fetch(`${origin}/admin/api/keys`, {
      method: 'POST',
      headers: {
        cookie: `wathiq_admin_session=${client.cookies.get('wathiq_admin_session')}`,
        origin,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ _csrf: csrf, name: 'json' }),
    });
    expect(json.status).toBe(403);
    expect(await apiKeysStore(service.database.db).listByAccount(holder.accountId)).toHaveLength(
      before.length,
    );

    // The same request with the token and a Referer instead of an Origin goes through.
    const ok = await client.post(
      '/admin/api/keys',
      { ...fields, _csrf: csrf },
      { origin: null, headers: { referer: `${origin}/admin/api` } },
    );
    expect(ok.status).toBe(200);
  });

  it('creates a key with the chosen scopes and shows its secret once', async () => {
    const { client, csrf } = await signedIn();
    const res = await client.post('/admin/api/keys', {
      _csrf: csrf,
      name: 'Reader <b>one</b>',
      scopes: ['documents:read', 'webhooks:read', 'not-a-scope'],
    });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('Reader &lt;b&gt;one&lt;/b&gt;');
    const secret = /id="new-key-secret"[^>]*value="([^"]+)"/.exec(page)?.[1];
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const keys = await apiKeysStore(service.database.db).listByAccount(holder.accountId);
    const created = keys.find((k) => k.name === 'Reader <b>one</b>')!;
    expect(created.scopes).toEqual(['documents:read', 'webhooks:read']);
    const again = await (await client.get('/admin/api')).text();
    expect(again).not.toContain(secret!);
    expect(again).toContain(created.key.slice(0, 11));
    expect(again).not.toContain(created.key); // the list shows a prefix only
  });

  it('re-shows the form with messages for a missing name or no scopes (422)', async () => {
    const { client, csrf } = await signedIn();
    const res = await client.post('/admin/api/keys', { _csrf: csrf, name: '   ' });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('Enter a name for the key.');
    expect(page).toContain('Choose at least one scope.');
    expect(page).toContain('aria-invalid="true"');
    const long = await client.post('/admin/api/keys', {
      _csrf: csrf,
      name: 'x'.repeat(256),
      scopes: 'documents:read',
    });
    expect(long.status).toBe(422);
    expect(await long.text()).toContain('at most 255 characters');
  });

  it('answers 404 for another account’s key, an unknown key and a malformed id; the key stays active', async () => {
    const other = await service.createAccount();
    const { client, csrf } = await signedIn();
    for (const id of [other.apiKeyId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const res = await client.post(`/admin/api/keys/${encodeURIComponent(id)}/revoke`, { _csrf: csrf });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('text/html');
    }
    const [otherKey] = await apiKeysStore(service.database.db).listByAccount(other.accountId);
    expect(otherKey?.revokedAt).toBeNull();
    expect(
      (await service.request('/documents/00000000-0000-4000-8000-000000000000', { account: other })).status,
    ).toBe(404);
  });

  it('revokes a key, once', async () => {
    const { client, csrf } = await signedIn();
    const [key] = await apiKeysStore(service.database.db).listByAccount(holder.accountId);
    const first = await client.post(`/admin/api/keys/${key!.id}/revoke`, { _csrf: csrf });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/admin/api?m=revoked');
    const second = await client.post(`/admin/api/keys/${key!.id}/revoke`, { _csrf: csrf });
    expect(second.headers.get('location')).toBe('/admin/api?m=already_revoked');
  });

  it('shows the plan and its rate limit', async () => {
    const enterprise = await createDashboardAccount(service, { plan: 'enterprise' });
    const { client } = await signedIn(enterprise);
    const page = await (await client.get('/admin/api')).text();
    expect(page).toContain('Enterprise plan: up to 1,000 requests per minute for each key.');
  });

  it('answers an oversized form with an HTML 413', async () => {
    const { client, csrf } = await signedIn();
    const res = await client.post('/admin/api/keys', { _csrf: csrf, name: 'x'.repeat(64 * 1024) });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('text/html');
  });
});

describe('overview', () => {
  it('shows empty states when the account has no documents or webhooks', async () => {
    const fresh = await createDashboardAccount(service);
    const { client } = await signedIn(fresh);
    const page = await (await client.get('/admin')).text();
    expect(page).toContain('No documents yet.');
    expect(page).toContain('No webhooks yet.');
  });

  it('answers 404 for a malformed document id, and for another account’s document', async () => {
    const { client } = await signedIn();
    expect((await client.get('/admin/documents/nope')).status).toBe(404);
    expect((await client.get('/admin/documents/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});

describe('failures', () => {
  it('answers an unexpected failure with an HTML 500 that names the request and hides the cause', async () => {
    const broken = (() => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2');
    }) as unknown as Knex;
    // The dashboard mounted as app.ts mounts it, over a database that fails on every query.
    const app = new Koa<AppState>();
    app.silent = true;
    app.use(requestId());
    app.use(errorHandler(service.logger));
    app.use(
      createAdminDashboard({
        config: service.config,
        db: broken,
        logger: service.logger,
        secrets: service.deps.secrets,
      }),
    );
    const handle = app.callback();
    const server = createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/admin/api`, {
        redirect: 'manual',
        headers: { cookie: `wathiq_admin_session=${'A'.repeat(43)}`, 'x-request-id': 'req-500-check' },
      });
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      const body = await res.text();
      expect(body).toContain('Something went wrong');
      expect(body).toContain('req-500-check');
      expect(body).not.toMatch(/hunter2|ECONNREFUSED/);
    } finally {
      server.close();
    }
  });

  it('sends a GET of the create address to the keys page, and links the language switch to a real page', async () => {
    const { client, csrf } = await signedIn();
    const get = await client.get('/admin/api/keys');
    expect(get.status).toBe(303);
    expect(get.headers.get('location')).toBe('/admin/api');
    const invalid = await client.post('/admin/api/keys', { _csrf: csrf, name: '' });
    expect(await invalid.text()).toContain('href="/admin/api?lang=ar"');
    const forbidden = await client.post('/admin/api/keys', { name: 'x' });
    expect(await forbidden.text()).toContain('href="/admin?lang=ar"');
  });
});
