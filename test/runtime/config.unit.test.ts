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

  it('treats empty strings as unset and trims the base URL', () => {
    const config = loadConfig({ DATABASE_URL: '', PUBLIC_BASE_URL: 'https://wathiq.example/' });
    expect(config.database.url).toBeUndefined();
    expect(config.http.publicBaseUrl).toBe('https://wathiq.example');
  });
});
