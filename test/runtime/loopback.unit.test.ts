import { describe, expect, it } from 'vitest';
import { devToolsAllowed, isLoopbackHost } from '../../src/config.ts';

describe('isLoopbackHost', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    'localhost',
    'LocalHost',
  ])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each([
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '192.168.1.2',
    '128.0.0.1',
    '::2',
    '::ffff:10.0.0.1',
    'example.com',
    'localhost.example.com',
    '',
  ])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });

  it('allows the development tools only outside production, on loopback', () => {
    expect(devToolsAllowed({ env: 'development', http: { host: '127.0.0.1' } })).toBe(true);
    expect(devToolsAllowed({ env: 'test', http: { host: '::1' } })).toBe(true);
    expect(devToolsAllowed({ env: 'development', http: { host: '0.0.0.0' } })).toBe(false);
    expect(devToolsAllowed({ env: 'production', http: { host: '127.0.0.1' } })).toBe(false);
  });
});
