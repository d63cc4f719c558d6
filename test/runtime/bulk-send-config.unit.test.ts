import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

function issuesOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

describe('the bulk-send configuration slice', () => {
  it('builds its defaults, the body limit in bytes', () => {
    expect(loadConfig({}).bulkSends).toEqual({
      maxRows: 5000,
      maxBytes: 5 * 1024 * 1024,
      pageSize: 50,
      pagesPerRun: 20,
      concurrency: 4,
      share: 0.5,
      tierRecipientsPerDay: 1000,
      throughputPerSecond: 80,
      timeScale: 1,
      heartbeatMs: 30_000,
    });
  });

  it.each([
    ['BULK_SEND_QUOTA_SHARE', '0'],
    ['BULK_SEND_QUOTA_SHARE', '1.5'],
    ['BULK_SEND_MAX_ROWS', '100001'],
    ['BULK_SEND_MAX_ROWS', '1e309'],
    ['BULK_SEND_MAX_MB', '101'],
    ['BULK_SEND_CONCURRENCY', '__proto__'],
    ['BULK_SEND_PAGE_SIZE', '9'.repeat(10_000)],
    ['BULK_SEND_TIME_SCALE', '2'],
    ['WHATSAPP_TIER_RECIPIENTS_PER_DAY', '-1'],
    ['WHATSAPP_THROUGHPUT_MPS', '0'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    const issues = issuesOf({ [name]: value });
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.join('\n')).toContain(name);
  });
});
