import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { configIssues as issuesOf } from '../helpers/config-issues.ts';

describe('fair shares in the configuration', () => {
  it('defaults: 10 keys, 3 keys’ worth of requests an account, 16 uploads in flight and 4 of an account', () => {
    expect(loadConfig({}).fairShares).toEqual({
      maxActiveKeys: 10,
      accountRateMultiplier: 3,
      uploadsInFlight: 16,
      uploadsInFlightPerAccount: 4,
    });
  });

  it('reads every variable at its bounds', () => {
    expect(
      loadConfig({
        API_KEYS_MAX_PER_ACCOUNT: '1000',
        RATE_LIMIT_ACCOUNT_MULTIPLIER: '100',
        UPLOADS_MAX_IN_FLIGHT: '10000',
        UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: '10000',
      }).fairShares,
    ).toEqual({
      maxActiveKeys: 1000,
      accountRateMultiplier: 100,
      uploadsInFlight: 10_000,
      uploadsInFlightPerAccount: 10_000,
    });
    expect(
      loadConfig({
        API_KEYS_MAX_PER_ACCOUNT: '1',
        RATE_LIMIT_ACCOUNT_MULTIPLIER: '1',
        UPLOADS_MAX_IN_FLIGHT: '1',
        UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: '1',
      }).fairShares,
    ).toEqual({
      maxActiveKeys: 1,
      accountRateMultiplier: 1,
      uploadsInFlight: 1,
      uploadsInFlightPerAccount: 1,
    });
  });

  it.each([
    ['API_KEYS_MAX_PER_ACCOUNT', '0'],
    ['API_KEYS_MAX_PER_ACCOUNT', '1001'],
    ['API_KEYS_MAX_PER_ACCOUNT', '2.5'],
    ['RATE_LIMIT_ACCOUNT_MULTIPLIER', '0'],
    ['RATE_LIMIT_ACCOUNT_MULTIPLIER', '101'],
    ['UPLOADS_MAX_IN_FLIGHT', '0'],
    ['UPLOADS_MAX_IN_FLIGHT', '10001'],
    ['UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT', '0'],
    ['UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT', 'many'],
  ])('refuses %s=%s, naming it', (name, value) => {
    const issues = issuesOf({ [name]: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${name}: `));
  });

  it('refuses more uploads in flight for one account than for all of them', () => {
    expect(issuesOf({ UPLOADS_MAX_IN_FLIGHT: '8', UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: '9' })).toEqual([
      'UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: must be at most UPLOADS_MAX_IN_FLIGHT (one account’s part of the whole)',
    ]);
    expect(issuesOf({ UPLOADS_MAX_IN_FLIGHT: '8', UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: '8' })).toEqual([]);
  });
});
