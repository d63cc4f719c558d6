import { totpCode } from '../../src/auth/totp.ts';
import { csrfFrom, type FormClient } from './dashboard.ts';

/** The setup key the security page shows while an enrolment waits (spaces between groups dropped). */
export function setupKeyFrom(pageHtml: string): string {
  const match = /<code id="totp-secret"[^>]*>([A-Z2-7 ]+)<\/code>/.exec(pageHtml);
  if (!match?.[1]) throw new Error('no setup key in the page');
  return match[1].replace(/ /g, '');
}

/** The recovery codes of the page that confirmed an enrolment. */
export function recoveryCodesFrom(pageHtml: string): string[] {
  const match = /<textarea id="recovery-codes"[^>]*>([^<]*)<\/textarea/.exec(pageHtml);
  if (!match?.[1]) throw new Error('no recovery codes in the page');
  return match[1].trim().split('\n');
}

/** Turns two-step sign-in on for the signed-in client, confirming with the code for `at`. */
export async function enrolTotp(
  client: FormClient,
  csrf: string,
  at: Date,
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await client.post('/admin/security/totp/start', { _csrf: csrf });
  if (started.status !== 303) throw new Error(`start answered ${started.status}`);
  const secret = setupKeyFrom(await (await client.get('/admin/security')).text());
  const confirmed = await client.post('/admin/security/totp/confirm', {
    _csrf: csrf,
    code: totpCode(secret, at),
  });
  if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status}`);
  return { secret, recoveryCodes: recoveryCodesFrom(await confirmed.text()) };
}

/** The password step of sign-in; returns its answer and the login token for the code step. */
export async function passwordStep(
  client: FormClient,
  email: string,
  password: string,
): Promise<{ res: Response; token: string }> {
  const token = csrfFrom(await (await client.get('/admin/login')).text());
  const res = await client.post('/admin/login', { _csrf: token, email, password });
  return { res, token };
}
