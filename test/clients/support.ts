import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { eventually } from '../helpers/approval-flow.ts';

/**
 * The parts of the quickstart that are not the API, shared by the client tests: acting through the development
 * inbox (the approver's button, as the console WhatsApp provider shows it) and checking the downloaded file
 * against the SHA-256 the public verification page prints.
 */

/** Taps "Approve" on the approver's message in /dev/inbox; `token` is the end of their approval link. */
export async function approveInInbox(rootUrl: string, token: string): Promise<void> {
  const payload = `approve:${token}`;
  const messageId = await eventually(async () => {
    const page = (await (await fetch(`${rootUrl}/dev/inbox`)).text()).replace(/\n/g, '');
    const at = page.indexOf(`value="${payload}"`);
    const found = at < 0 ? [] : [...page.slice(0, at).matchAll(/name="message_id" value="(\d+)"/g)];
    return found.at(-1)?.[1] ?? undefined;
  }, 60_000);
  const reply = await fetch(`${rootUrl}/dev/inbox/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ message_id: messageId, payload }).toString(),
    redirect: 'manual',
  });
  expect(reply.status).toBe(302);
  expect(reply.headers.get('location')).toContain('result=accepted');
}

/**
 * A public URL the service made (download, verification page), fetched from the service under test: its
 * PUBLIC_BASE_URL names a host it does not listen on.
 */
export function fetchPublic(rootUrl: string, url: string): Promise<Response> {
  const { pathname, search } = new URL(url);
  return fetch(`${rootUrl}${pathname}${search}`);
}

/** The signed file's SHA-256 as the document's public verification page states it. */
export async function verifiedSha256(rootUrl: string, verificationUrl: string): Promise<string> {
  const page = await (await fetchPublic(rootUrl, verificationUrl)).text();
  const match = /id="signed-sha256">([0-9a-f]{64})</.exec(page);
  expect(match, 'the verification page shows the signed file’s SHA-256').not.toBeNull();
  return match![1]!;
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
