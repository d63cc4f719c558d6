import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCloudProvider } from '../../src/whatsapp/cloud-provider.ts';
import { buildTemplateMessage } from '../../src/whatsapp/templates.ts';
import { WhatsAppSendError, type WhatsAppProvider } from '../../src/whatsapp/types.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { freePort } from '../setup/free-port.ts';
import { notice, templates } from '../helpers/whatsapp-fixtures.ts';

let fake: FakeGraphApi;
let provider: WhatsAppProvider;
/** The number `notice()` sends to, which the scripted answers are for. */
const TO = notice().phone;

beforeAll(async () => {
  fake = await startFakeGraphApi();
  provider = createCloudProvider({
    apiUrl: fake.apiUrl,
    phoneNumberId: fake.phoneNumberId,
    accessToken: fake.accessToken,
    timeoutMs: 2_000,
    templates,
  });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function sendError(p: WhatsAppProvider = provider): Promise<WhatsAppSendError> {
  try {
    await p.send(notice());
  } catch (err) {
    expect(err).toBeInstanceOf(WhatsAppSendError);
    return err as WhatsAppSendError;
  }
  throw new Error('expected the send to fail');
}

describe('cloud provider', () => {
  it('POSTs the template message with the Bearer token and returns the wamid', async () => {
    const n = notice({ actionType: 'approve_only' });
    const { wamid } = await provider.send(n);
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/v21.0/${fake.phoneNumberId}/messages`);
    expect(req.headers.authorization).toBe(`Bearer ${fake.accessToken}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual(buildTemplateMessage(n, templates));
    expect(wamid).toBe(req.wamid);
    expect(wamid).toMatch(/^wamid\./);
  });

  it('a wrong token is refused by Graph (190) and is not retryable', async () => {
    const wrong = createCloudProvider({
      apiUrl: fake.apiUrl,
      phoneNumberId: fake.phoneNumberId,
      accessToken: 'not-the-token',
      timeoutMs: 2_000,
      templates,
    });
    const err = await sendError(wrong);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer not-the-token');
    expect(err).toMatchObject({ retryable: false, code: 190, httpStatus: 401, reason: 'graph_error' });
    expect(err.message).not.toContain('not-the-token');
  });

  it('500 is retryable, and the next attempt succeeds', async () => {
    fake.scriptFor(TO, { kind: 'raw', status: 500, body: '<html>oops</html>' });
    const err = await sendError();
    expect(err).toMatchObject({ retryable: true, httpStatus: 500, reason: 'http_error' });
    const { wamid } = await provider.send(notice());
    expect(wamid).toBe(fake.requests[1]!.wamid);
  });

  it('400 with 131026 (undeliverable) is not retryable and keeps Graph details', async () => {
    fake.scriptFor(TO, {
      kind: 'graph_error',
      status: 400,
      code: 131026,
      message: 'Message undeliverable',
      subcode: 2494010,
    });
    const err = await sendError();
    expect(err).toMatchObject({
      retryable: false,
      code: 131026,
      subcode: 2494010,
      httpStatus: 400,
      reason: 'graph_error',
      details: 'Message undeliverable',
    });
    expect(err.fbtraceId).toBeTruthy();
    expect(err.toJSON()).toMatchObject({ code: 131026, retryable: false, http_status: 400 });
  });

  it.each([
    [429, 130429, true],
    [400, 131048, true],
    [400, 131056, true],
    [400, 80007, true],
    [400, 4, true],
    [503, 2, true],
    [404, 132001, false],
    [400, 100, false],
    [400, 132000, false],
    [500, 131026, false],
    [400, 999999, false],
    [502, 999999, true],
  ])('HTTP %i with code %i → retryable %s', async (status, code, retryable) => {
    fake.scriptFor(TO, { kind: 'graph_error', status, code });
    expect(await sendError()).toMatchObject({ retryable, code, httpStatus: status });
  });

  it('429 without a Graph body is retryable and carries Retry-After', async () => {
    fake.scriptFor(TO, { kind: 'raw', status: 429, body: 'slow down', headers: { 'retry-after': '7' } });
    expect(await sendError()).toMatchObject({ retryable: true, httpStatus: 429, retryAfterMs: 7000 });
  });

  it('a server that never answers times out, retryable', async () => {
    const impatient = createCloudProvider({
      apiUrl: fake.apiUrl,
      phoneNumberId: fake.phoneNumberId,
      accessToken: fake.accessToken,
      timeoutMs: 150,
      templates,
    });
    fake.scriptFor(TO, { kind: 'hang' });
    expect(await sendError(impatient)).toMatchObject({ retryable: true, reason: 'timeout' });
  });

  it('a slow answer within the deadline succeeds', async () => {
    fake.scriptFor(TO, { kind: 'delay', ms: 20 });
    const { wamid } = await provider.send(notice());
    expect(wamid).toMatch(/^wamid\./);
  });

  it('an unreachable API is a retryable network error', async () => {
    const port = await freePort();
    const nowhere = createCloudProvider({
      apiUrl: `http://127.0.0.1:${port}/v21.0`,
      phoneNumberId: '1',
      accessToken: 't',
      timeoutMs: 2_000,
      templates,
    });
    expect(await sendError(nowhere)).toMatchObject({ retryable: true, reason: 'network' });
  });

  it('does not follow redirects', async () => {
    fake.scriptFor(TO, { kind: 'raw', status: 302, headers: { location: `${fake.apiUrl}/elsewhere` } });
    expect(await sendError()).toMatchObject({ retryable: false, httpStatus: 302 });
    expect(fake.requests).toHaveLength(1);
  });

  it('a 200 without a message id is not retried (it may have been sent)', async () => {
    fake.scriptFor(TO, { kind: 'raw', status: 200, body: '{"messaging_product":"whatsapp"}' });
    expect(await sendError()).toMatchObject({ retryable: false, reason: 'invalid_response' });
  });
});
