import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('runs on defaults with nothing configured', () => {
    const config = loadConfig({});
    expect(config.http.port).toBe(3000);
    expect(config.http.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.database.url).toBeUndefined();
    expect(config.temporal.address).toBeUndefined();
    expect(config.temporal.taskQueue).toBe('document-approval');
    expect(config.rateLimit.store).toBe('memory');
    expect(config.plans.basic.requestsPerMinute).toBe(100);
    expect(config.plans.business.requestsPerMinute).toBe(300);
    expect(config.plans.enterprise.requestsPerMinute).toBe(1000);
    expect(config.plans.basic.maxUploadBytes).toBe(20 * 1024 * 1024);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['RATE_LIMIT_STORE', 'redis'],
    ['NODE_ENV', 'staging'],
    ['PUBLIC_BASE_URL', 'not a url'],
    ['MAX_UPLOAD_MB_BASIC', '-1'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '-1'],
    ['TRUST_PROXY', '11'],
    ['TRUST_PROXY', '1.5'],
  ])('refuses %s=%s and names the variable', (name, value) => {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).message).toContain(name);
  });

  it('has the reminder, sign-in delay and purge limits of the README by default', () => {
    const config = loadConfig({});
    expect(config.reminders).toEqual({ cooldownMs: 60 * 60_000, maxPerApprover: 5 });
    expect(config.login).toEqual({
      freeFailures: { email: 3, ip: 20 },
      baseDelayMs: 1000,
      maxDelayMs: 60_000,
      windowMs: 15 * 60_000,
    });
    expect(config.purge).toEqual({ intervalMs: 60 * 60_000, batchSize: 1000, maxBatches: 100 });
  });

  it.each([
    ['REMIND_COOLDOWN_MINUTES', '-1'],
    ['REMIND_MAX_PER_APPROVER', '0'],
    ['REMIND_MAX_PER_APPROVER', '101'],
    ['LOGIN_DELAY_AFTER_FAILURES_EMAIL', '0'],
    ['LOGIN_DELAY_MAX_SECONDS', '3601'],
    ['PURGE_INTERVAL_MINUTES', '0'],
    ['PURGE_BATCH_SIZE', '100001'],
    // A wait longer than the failure window would be forgotten before it ends.
    ['LOGIN_FAILURE_WINDOW_MINUTES', '0.5'],
  ])('refuses %s=%s and names the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('treats empty strings as unset and trims the base URL', () => {
    const config = loadConfig({ DATABASE_URL: '', PUBLIC_BASE_URL: 'https://wathiq.example/' });
    expect(config.database.url).toBeUndefined();
    expect(config.http.publicBaseUrl).toBe('https://wathiq.example');
  });

  it('reads TRUST_PROXY as a number of proxy hops; false and true (the old switch) mean 0 and 1', () => {
    expect(loadConfig({}).http.proxyHops).toBe(0);
    for (const [value, hops] of [
      ['0', 0],
      ['1', 1],
      ['2', 2],
      ['10', 10],
      ['false', 0],
      ['true', 1],
    ] as const) {
      expect(loadConfig({ TRUST_PROXY: value }).http.proxyHops, value).toBe(hops);
    }
  });

  it('listens on 127.0.0.1 unless told otherwise, and on 0.0.0.0 by default in production', () => {
    expect(loadConfig({}).http.host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'test' }).http.host).toBe('127.0.0.1');
    const production = {
      NODE_ENV: 'production',
      WHATSAPP_PROVIDER: 'cloud',
      WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
      WHATSAPP_ACCESS_TOKEN: 'token',
      WHATSAPP_APP_SECRET: 'secret',
      WHATSAPP_VERIFY_TOKEN: 'verify',
    };
    expect(loadConfig(production).http.host).toBe('0.0.0.0');
    expect(loadConfig({ ...production, HOST: '10.0.0.5' }).http.host).toBe('10.0.0.5');
    // A development server others can reach is fine, without the console provider.
    expect(loadConfig({ ...production, NODE_ENV: 'development', HOST: '0.0.0.0' }).http.host).toBe('0.0.0.0');
  });
});
