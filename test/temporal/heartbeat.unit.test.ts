import { describe, expect, it } from 'vitest';
import { heartbeatIntervalMs } from '../../src/temporal/heartbeat.ts';

describe('heartbeatIntervalMs', () => {
  it('heartbeats every 5 s within a time-out of 15 s or more, and with no time-out', () => {
    expect(heartbeatIntervalMs(30_000)).toBe(5_000);
    expect(heartbeatIntervalMs(15_000)).toBe(5_000);
    expect(heartbeatIntervalMs(undefined)).toBe(5_000);
  });

  it('heartbeats three times within a shorter time-out, so a live attempt is never given up', () => {
    expect(heartbeatIntervalMs(6_000)).toBe(2_000);
    expect(heartbeatIntervalMs(3_000)).toBe(1_000);
  });
});
