import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../src/api/schemas/envelopes.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import { postDocument, startDocumentsService, type DocumentsService } from './support.ts';

/** The caps of this file: three uploads in flight in the process, two of one account. */
const ENV = { UPLOADS_MAX_IN_FLIGHT: '3', UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: '2' };

let service: DocumentsService;
beforeAll(async () => {
  service = await startDocumentsService(ENV);
});
afterAll(() => service.close());

const held: http.ClientRequest[] = [];
afterEach(() => {
  for (const req of held.splice(0)) req.destroy();
});

/**
 * An upload whose body never ends: the service has admitted it and is still receiving it, as with a slow client.
 * Destroying the request is the client going away.
 */
function holdUpload(account: TestAccount): void {
  const url = new URL(`${service.baseUrl}/documents`);
  const req = http.request(url, {
    method: 'POST',
    headers: { authorization: account.authorization, 'content-type': 'multipart/form-data; boundary=held' },
  });
  req.on('error', () => undefined); // destroyed by the test
  req.write('--held\r\nContent-Disposition: form-data; name="title"\r\n\r\nHeld\r\n');
  held.push(req);
}

/** A small upload that, once admitted, is refused at once for its missing file (422): it never stays in flight. */
async function probe(
  account: TestAccount,
): Promise<{ status: number; message: string; retryAfter: string | null }> {
  const res = await postDocument(service, account, { title: 'Probe' }, { file: null });
  const body = ErrorEnvelope.parse(await res.json());
  return { status: res.status, message: body.error.message, retryAfter: res.headers.get('retry-after') };
}

/** Probes until the answer is `status` (the held uploads reach the service in their own time), at most 10 s. */
async function probeUntil(account: TestAccount, status: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await probe(account);
    if (answer.status === status || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const PER_ACCOUNT =
  'This account already has 2 uploads in progress, the most it may have at once; try again in 1 second when one has finished.';
const GLOBAL = 'Too many documents are being uploaded right now; try again in 1 second.';

describe('uploads in flight', () => {
  it('one account past UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT is a 503 with Retry-After; another account is accepted', async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    holdUpload(a);
    expect((await probe(a)).status).toBe(422); // one held and the probe: two, the account's limit
    holdUpload(a);
    expect(await probeUntil(a, 503)).toEqual({ status: 503, message: PER_ACCOUNT, retryAfter: '1' });
    const accepted = await postDocument(service, b, { title: 'Other account' });
    expect(accepted.status, await accepted.clone().text()).toBe(201);
  });

  it('past UPLOADS_MAX_IN_FLIGHT every account is refused until one ends; a client going away frees its place', async () => {
    const [a, b, c] = [
      await service.createAccount(),
      await service.createAccount(),
      await service.createAccount(),
    ];
    holdUpload(a);
    holdUpload(a);
    expect((await probeUntil(a, 503)).message).toBe(PER_ACCOUNT);
    holdUpload(b);
    expect(await probeUntil(c, 503)).toEqual({ status: 503, message: GLOBAL, retryAfter: '1' });
    expect((await probe(b)).message).toBe(GLOBAL);
    for (const req of held.splice(0)) req.destroy();
    expect((await probeUntil(c, 422)).status).toBe(422);
    const accepted = await postDocument(service, c, { title: 'After' });
    expect(accepted.status, await accepted.clone().text()).toBe(201);
  });
});
