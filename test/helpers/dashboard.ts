import { randomBytes } from 'node:crypto';
import { Agent } from 'undici';
import { createAccountWithKey } from '../../src/features/accounts/create-account.ts';
import type { Plan } from '../../src/domain/plans.ts';
import type { TestService } from './test-service.ts';

export interface DashboardAccount {
  accountId: string;
  email: string;
  password: string;
  name: string;
}

/** An account made the way the CLI makes one (`account:create`), with a password to sign in with. */
export async function createDashboardAccount(
  service: TestService,
  options: { plan?: Plan; name?: string } = {},
): Promise<DashboardAccount> {
  const email = `holder-${randomBytes(5).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const name = options.name ?? 'Test Holder';
  const { account } = await createAccountWithKey(service.database.db, {
    email,
    password,
    name,
    plan: options.plan ?? 'business',
  });
  return { accountId: account.id, email, password, name };
}

/** The value of a hidden `_csrf` input in a page. */
export function csrfFrom(pageHtml: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(pageHtml);
  if (!match?.[1]) throw new Error('no _csrf field in the page');
  return match[1];
}

/**
 * A plain-HTTP client with a cookie jar, for what a browser would never send (missing tokens, foreign
 * origins) and for checking status codes and headers exactly.
 */
export class FormClient {
  readonly cookies = new Map<string, string>();
  private readonly dispatcher: Agent | undefined;
  /** `localAddress`: the loopback address to connect from (127.0.0.2 …), so the service sees another client. */
  constructor(
    readonly origin: string,
    options: { localAddress?: string } = {},
  ) {
    this.dispatcher = options.localAddress ? new Agent({ localAddress: options.localAddress }) : undefined;
  }

  private fetch(url: string, init: RequestInit): Promise<Response> {
    // Node's fetch takes a dispatcher from the undici package.
    return fetch(url, this.dispatcher ? { ...init, dispatcher: this.dispatcher } : init);
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(pathname: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await this.fetch(`${this.origin}${pathname}`, {
      redirect: 'manual',
      headers: { cookie: this.cookieHeader(), ...headers },
    });
    this.remember(res);
    return res;
  }

  async post(
    pathname: string,
    fields: Record<string, string | string[]>,
    options: { headers?: Record<string, string>; origin?: string | null } = {},
  ): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields))
      for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    const origin = options.origin === undefined ? this.origin : options.origin;
    const res = await this.fetch(`${this.origin}${pathname}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        ...(origin === null ? {} : { origin }),
        ...options.headers,
      },
      body,
    });
    this.remember(res);
    return res;
  }

  /** Signs in like the login form does; returns the session's CSRF token, read from a signed-in page. */
  async signIn(email: string, password: string): Promise<string> {
    const form = await this.get('/admin/login');
    const token = csrfFrom(await form.text());
    const res = await this.post('/admin/login', { _csrf: token, email, password });
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
    return this.csrf();
  }

  async csrf(): Promise<string> {
    const page = await this.get('/admin/api');
    if (page.status !== 200) throw new Error(`GET /admin/api answered ${page.status}`);
    return csrfFrom(await page.text());
  }
}
