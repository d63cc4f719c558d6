import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService();
  account = await service.createAccount();
});
afterAll(() => service.close());

describe('API → Temporal → activity → PostgreSQL', () => {
  it('POST /pings runs a workflow whose activity writes the row the response describes', async () => {
    const res = await service.request('/pings', {
      method: 'POST',
      account,
      body: JSON.stringify({ message: 'مرحبا hello' }),
    });
    expect(res.status).toBe(201);
    const { data } = (await res.json()) as {
      data: { id: string; workflow_id: string; message: string; recorded_at: string };
    };
    expect(data.workflow_id).toBe(`ping-${data.id}`);
    expect(data.message).toBe('مرحبا hello');

    const row = await service.database
      .db('pings')
      .where({ id: data.id })
      .first<{ account_id: string; message: string }>();
    expect(row).toMatchObject({ account_id: account.accountId, message: 'مرحبا hello' });

    const description = await service.temporal.client.workflow.getHandle(data.workflow_id).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.taskQueue).toBe(service.taskQueue);
    expect(description.typedSearchAttributes.get({ name: 'AccountId', type: 'KEYWORD' } as never)).toBe(
      account.accountId,
    );
    const history = await service.temporal.client.workflow.getHandle(data.workflow_id).fetchHistory();
    const activityTypes = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    expect(activityTypes).toEqual(['recordPing']);

    const read = await service.request(`/pings/${data.id}`, { account });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: { recorded_at: string } }).data.recorded_at).toMatch(/\+00:00$/);
    expect(data.recorded_at).toMatch(/\+00:00$/);
  });

  it('a ping of another account is 404', async () => {
    const res = await service.request('/pings', { method: 'POST', account, body: '{}' });
    const { data } = (await res.json()) as { data: { id: string; message: string } };
    expect(data.message).toBe('ping');
    const stranger = await service.createAccount();
    const read = await service.request(`/pings/${data.id}`, { account: stranger });
    expect(read.status).toBe(404);
  });
});
