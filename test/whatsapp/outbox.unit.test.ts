import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { heartbeatMemory, wamidFromHeartbeat } from '../../src/features/approval/heartbeat-memory.ts';
import { retryDelays, withRetries } from '../../src/whatsapp/record-retry.ts';

describe('retryDelays', () => {
  it('doubles from the backoff, one wait fewer than the tries', () => {
    expect(retryDelays({ attempts: 4, backoffMs: 200 })).toEqual([200, 400, 800]);
    expect(retryDelays({ attempts: 1, backoffMs: 200 })).toEqual([]);
    expect(retryDelays({ attempts: 0, backoffMs: 200 })).toEqual([]);
    expect(retryDelays({ attempts: 3, backoffMs: 0 })).toEqual([0, 0]);
  });
});

describe('withRetries', () => {
  const waits: number[] = [];
  const wait = (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };

  it('returns the first success, after waiting between failures', async () => {
    waits.length = 0;
    let calls = 0;
    const heard: number[] = [];
    const result = await withRetries(
      () => (++calls < 3 ? Promise.reject(new Error(`fail ${calls}`)) : Promise.resolve('done')),
      { attempts: 3, backoffMs: 10 },
      (_err, attempt) => heard.push(attempt),
      wait,
    );
    expect(result).toBe('done');
    expect(calls).toBe(3);
    expect(waits).toEqual([10, 20]);
    expect(heard).toEqual([1, 2]);
  });

  it('throws the last error when every try fails', async () => {
    waits.length = 0;
    let calls = 0;
    await expect(
      withRetries(
        () => Promise.reject(new Error(`fail ${++calls}`)),
        { attempts: 2, backoffMs: 5 },
        undefined,
        wait,
      ),
    ).rejects.toThrow('fail 2');
    expect(waits).toEqual([5]);
  });
});

describe('wamidFromHeartbeat', () => {
  const key = 'document-1:approver-1:approval_request';
  it('reads the id kept for this notice', () => {
    expect(wamidFromHeartbeat({ idempotencyKey: key, wamid: 'wamid.A' }, key)).toBe('wamid.A');
  });
  it('ignores details of another notice, of another shape, or none', () => {
    expect(wamidFromHeartbeat({ idempotencyKey: `${key}x`, wamid: 'wamid.A' }, key)).toBeUndefined();
    expect(wamidFromHeartbeat({ idempotencyKey: key, wamid: 42 }, key)).toBeUndefined();
    expect(wamidFromHeartbeat({ idempotencyKey: key, wamid: '' }, key)).toBeUndefined();
    expect(wamidFromHeartbeat({ idempotencyKey: key, wamid: 'w'.repeat(129) }, key)).toBeUndefined();
    expect(wamidFromHeartbeat('wamid.A', key)).toBeUndefined();
    expect(wamidFromHeartbeat(undefined, key)).toBeUndefined();
    expect(wamidFromHeartbeat(null, key)).toBeUndefined();
  });
});

describe('heartbeatMemory', () => {
  const key = 'document-1:approver-1:reminder:1';
  it('is undefined outside an activity (activities called directly)', () => {
    expect(heartbeatMemory(key)).toBeUndefined();
  });

  it('keeps the answer as heartbeat details and recalls what the previous attempt kept', async () => {
    const beats: unknown[] = [];
    const env = new MockActivityEnvironment({
      heartbeatDetails: { idempotencyKey: key, wamid: 'wamid.earlier' },
    });
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const recalled = await env.run(() => {
      const memory = heartbeatMemory(key)!;
      memory.keep('wamid.now');
      return Promise.resolve(memory.recall());
    });
    expect(recalled).toBe('wamid.earlier');
    expect(beats).toEqual([{ idempotencyKey: key, wamid: 'wamid.now' }]);
  });
});
