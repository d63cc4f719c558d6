import { describe, expect, it } from 'vitest';
import { html, trustedHtml } from '../../src/http/html.ts';
import { LOCALES, MESSAGE_KEYS, translator } from '../../src/admin/i18n.ts';
import { loginUrl, safeNext } from '../../src/admin/paths.ts';
import { homePage } from '../../src/admin/views/home-page.ts';
import type { PageContext } from '../../src/admin/views/page.ts';

describe('html template', () => {
  it('escapes every interpolated value', () => {
    const name = `<img src=x onerror="alert('1')">&\``;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;">' +
        '&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;</p>',
    );
  });

  it('nests templates and arrays without escaping twice, and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((s) => html`<li>${s}</li>`);
    // prettier-ignore
    const out = html`<ul>${items}</ul>${null}${undefined}${false}${0}`;
    expect(out.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(html`${trustedHtml('<br>')}`.value).toBe('<br>');
  });
});

describe('i18n', () => {
  it('fills placeholders and leaves unknown ones visible', () => {
    expect(translator('en')('planLine', { plan: 'Basic', limit: 100 })).toBe(
      'Basic plan: up to 100 requests per minute for each key.',
    );
    expect(translator('ar')('welcome', { name: 'سارة' })).toBe('مرحبًا، سارة');
    expect(translator('en')('welcome')).toBe('Welcome, {name}');
  });

  it('has every text in both languages, with the same placeholders', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    const [en, ar] = LOCALES.map((l) => translator(l));
    for (const key of MESSAGE_KEYS) {
      expect(en!(key).trim(), key).not.toBe('');
      expect(ar!(key).trim(), key).not.toBe('');
      expect(placeholders(ar!(key)), key).toEqual(placeholders(en!(key)));
    }
  });
});

describe('redirect targets after sign-in', () => {
  it.each([
    ['/admin', '/admin'],
    ['/admin/api', '/admin/api'],
    ['/admin/api?lang=ar', '/admin/api?lang=ar'],
    [
      '/admin/documents/0b6f9c8e-0000-4000-8000-000000000000',
      '/admin/documents/0b6f9c8e-0000-4000-8000-000000000000',
    ],
  ])('accepts %s', (given, expected) => expect(safeNext(given)).toBe(expected));

  it.each([
    'https://evil.example/admin',
    '//evil.example/admin',
    '/\\evil.example',
    '/admin/../api',
    '/admin/%2e%2e/api',
    '/administrator',
    '/admin/login',
    '/admin/logout',
    'admin',
    '/admin/\u0000',
    undefined,
    42,
  ])('refuses %s', (given) => expect(safeNext(given)).toBeUndefined());

  it('builds the login URL with only safe parts', () => {
    expect(loginUrl({ next: '/admin/api', message: 'expired' })).toBe(
      '/admin/login?next=%2Fadmin%2Fapi&m=expired',
    );
    expect(loginUrl({ next: 'https://evil.example' })).toBe('/admin/login');
  });
});

describe('overview page', () => {
  it('renders the sections it could read and a notice for those it could not', () => {
    const page: PageContext = {
      locale: 'en',
      t: translator('en'),
      path: '/admin',
      method: 'GET',
      query: new URLSearchParams(),
      requestId: 'r-1',
      account: { name: 'Acme <Ltd>', email: 'a@b.c', csrfToken: 'tok' },
    };
    const out = homePage(page, {
      counts: { ok: true, value: new Map([['approved', 2]]) },
      latest: { ok: false },
      webhooks: { ok: false },
    }).value;
    expect(out).toContain('Welcome, <bdi>Acme &lt;Ltd&gt;</bdi>');
    expect(out.match(/This section cannot be shown right now\./g)).toHaveLength(2);
    expect(out).toMatch(/data-status="approved">\s*<span class="count">2<\/span>/);
  });
});
