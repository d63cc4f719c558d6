import { describe, expect, it } from 'vitest';
import { ApprovalRefused } from '../../src/features/approval/client.ts';
import { onceTheWorkflowHasCaughtUp } from '../../src/features/approval/remind-approver.ts';

describe('a reminder asked for while the workflow catches up with a notification', () => {
  it('is asked again while the workflow says not_notified, and sent once it has caught up', async () => {
    let asked = 0;
    const result = await onceTheWorkflowHasCaughtUp(() => {
      asked++;
      return asked < 3
        ? Promise.reject(new ApprovalRefused('not_notified'))
        : Promise.resolve({ wamid: 'wamid.1' });
    });
    expect(result).toEqual({ wamid: 'wamid.1' });
    expect(asked).toBe(3);
  });

  it('is refused at once for any other refusal', async () => {
    let asked = 0;
    const attempt = onceTheWorkflowHasCaughtUp(() => {
      asked++;
      return Promise.reject(new ApprovalRefused('already_acted'));
    });
    await expect(attempt).rejects.toMatchObject({ refusal: 'already_acted' });
    expect(asked).toBe(1);
  });

  it('is refused as not_notified once the wait is over', async () => {
    let asked = 0;
    const started = Date.now();
    const attempt = onceTheWorkflowHasCaughtUp(() => {
      asked++;
      return Promise.reject(new ApprovalRefused('not_notified'));
    }, 300);
    await expect(attempt).rejects.toMatchObject({ refusal: 'not_notified' });
    expect(asked).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('does not retry an error that is not a refusal (Temporal unreachable, a time-out)', async () => {
    let asked = 0;
    const attempt = onceTheWorkflowHasCaughtUp(() => {
      asked++;
      return Promise.reject(new Error('deadline exceeded'));
    });
    await expect(attempt).rejects.toThrow('deadline exceeded');
    expect(asked).toBe(1);
  });
});
