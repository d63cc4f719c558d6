import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../setup/free-port.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/** The receiver the README's walk-through runs (examples/webhook-receiver.mjs) verifies real deliveries. */
let service: TestService;
let account: TestAccount;
let receiver: ChildProcessWithoutNullStreams | undefined;
let output = '';

beforeAll(async () => {
  service = await startTestService();
  account = await service.createAccount();
});
afterAll(async () => {
  receiver?.kill();
  await service.close();
});

async function startReceiver(secret: string, port: number): Promise<void> {
  receiver = spawn(process.execPath, [path.resolve('examples/webhook-receiver.mjs')], {
    env: { ...process.env, WATHIQ_WEBHOOK_SECRET: secret, PORT: String(port) },
  });
  receiver.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 10_000;
  while (!output.includes('listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(output).toContain('listening');
}

describe('examples/webhook-receiver.mjs', () => {
  it('verifies a delivery signed with its secret and refuses one signed with another', async () => {
    const port = await freePort();
    const created = await service.request('/webhooks', {
      method: 'POST',
      account,
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/`, events: ['document.approved'] }),
    });
    expect(created.status).toBe(201);
    const { data } = (await created.json()) as { data: { id: string; secret: string } };
    await startReceiver(data.secret, port);

    const ok = await service.request(`/webhooks/${data.id}/test`, { method: 'POST', account });
    expect(((await ok.json()) as { data: { ok: boolean; status_code: number } }).data).toMatchObject({
      ok: true,
      status_code: 204,
    });
    expect(output).toMatch(/verified webhook\.test /);

    await service.request(`/webhooks/${data.id}/rotate-secret`, { method: 'POST', account }); // receiver keeps the old one
    const refused = await service.request(`/webhooks/${data.id}/test`, { method: 'POST', account });
    expect(((await refused.json()) as { data: { ok: boolean; status_code: number } }).data).toMatchObject({
      ok: false,
      status_code: 400,
    });
    expect(output).toContain('refused a delivery');
  });
});
