import { z } from 'zod';
import { defineSlice } from './slice.ts';

export interface SignInConfig {
  /**
   * Dashboard sign-in: after `freeFailures` failures of one email (or one address, or one account's second-step
   * codes), each further attempt waits baseMs, 2×baseMs, 4×baseMs … up to maxMs; failures are forgotten after
   * `windowMs` without one.
   */
  login: {
    freeFailures: { email: number; ip: number; code: number };
    baseDelayMs: number;
    maxDelayMs: number;
    windowMs: number;
  };
}

const failures = (max: number, fallback: number, what: string) =>
  z.coerce.number().int().min(1).max(max).default(fallback).describe(what);

export const signInSlice = defineSlice({
  title: 'Dashboard sign-in',
  about: 'Delays after failed sign-ins to the dashboard (docs/dashboard.md).',
  env: {
    LOGIN_DELAY_AFTER_FAILURES_EMAIL: failures(
      100,
      3,
      'failed sign-ins of one email before each further attempt must wait',
    ),
    LOGIN_DELAY_AFTER_FAILURES_IP: failures(
      10_000,
      20,
      'the same for one client address, both steps (many people can share one office address; IPv6 by /64)',
    ),
    LOGIN_DELAY_AFTER_FAILURES_CODE: failures(
      100,
      5,
      "the same for one account's wrong second-step codes (TOTP or recovery code)",
    ),
    LOGIN_DELAY_BASE_SECONDS: z.coerce
      .number()
      .gt(0)
      .max(60)
      .default(1)
      .describe('the first wait; each further failure doubles it (1 s, 2 s, 4 s ...)'),
    LOGIN_DELAY_MAX_SECONDS: z.coerce
      .number()
      .gt(0)
      .max(3600)
      .default(60)
      .describe('the longest wait; the right password after the wait always signs in'),
    LOGIN_FAILURE_WINDOW_MINUTES: z.coerce
      .number()
      .gt(0)
      .max(1440)
      .default(15)
      .describe('failures are forgotten after this long without one (at least LOGIN_DELAY_MAX_SECONDS)'),
  },
  checks: {
    'sign-in': (e) =>
      e.LOGIN_FAILURE_WINDOW_MINUTES * 60 < e.LOGIN_DELAY_MAX_SECONDS
        ? [
            'LOGIN_FAILURE_WINDOW_MINUTES: must be at least LOGIN_DELAY_MAX_SECONDS, or a delay would be forgotten before it ends',
          ]
        : [],
  },
  build: (e): SignInConfig => ({
    login: {
      freeFailures: {
        email: e.LOGIN_DELAY_AFTER_FAILURES_EMAIL,
        ip: e.LOGIN_DELAY_AFTER_FAILURES_IP,
        code: e.LOGIN_DELAY_AFTER_FAILURES_CODE,
      },
      baseDelayMs: Math.round(e.LOGIN_DELAY_BASE_SECONDS * 1000),
      maxDelayMs: Math.round(Math.max(e.LOGIN_DELAY_MAX_SECONDS, e.LOGIN_DELAY_BASE_SECONDS) * 1000),
      windowMs: Math.round(e.LOGIN_FAILURE_WINDOW_MINUTES * 60_000),
    },
  }),
});
