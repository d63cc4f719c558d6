import { z } from 'zod';
import { templateName } from './fields.ts';
import { defineSlice } from './slice.ts';

export interface OtpConfig {
  /** One-time codes of verified approvers (OTP_*): life, wrong tries, resend limits, the page's proof, per-IP cap. */
  otp: {
    ttlMs: number;
    maxAttempts: number;
    resendMs: number;
    maxSendsPerHour: number;
    sessionMs: number;
    ipPerMinute: number;
    template: string;
  };
}

export const otpSlice = defineSlice({
  title: 'Verified approvers',
  about: 'One-time codes over WhatsApp for the approval page.',
  env: {
    OTP_TTL_MINUTES: z.coerce.number().gt(0).max(60).default(10).describe("a code's life"),
    OTP_MAX_ATTEMPTS: z.coerce
      .number()
      .int()
      .min(1)
      .max(20)
      .default(5)
      .describe('wrong codes before the code is locked (a new one must be sent)'),
    OTP_RESEND_SECONDS: z.coerce
      .number()
      .min(0)
      .max(3600)
      .default(60)
      .describe('the least time between two codes to one approver'),
    OTP_MAX_SENDS_PER_HOUR: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(5)
      .describe('codes per approver and hour'),
    OTP_SESSION_MINUTES: z.coerce
      .number()
      .gt(0)
      .max(1440)
      .default(30)
      .describe('how long a right code lets the page act (an HttpOnly cookie scoped to /a/{token})'),
    OTP_IP_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(20)
      .describe('code sends and checks per client address and minute (429 past it)'),
    WHATSAPP_TEMPLATE_OTP: templateName
      .default('wathiq_otp')
      .describe('the authentication template (copy-code button) registered with Meta'),
  },
  build: (e): OtpConfig => ({
    otp: {
      ttlMs: Math.round(e.OTP_TTL_MINUTES * 60_000),
      maxAttempts: e.OTP_MAX_ATTEMPTS,
      resendMs: Math.round(e.OTP_RESEND_SECONDS * 1000),
      maxSendsPerHour: e.OTP_MAX_SENDS_PER_HOUR,
      sessionMs: Math.round(e.OTP_SESSION_MINUTES * 60_000),
      ipPerMinute: e.OTP_IP_PER_MINUTE,
      template: e.WHATSAPP_TEMPLATE_OTP,
    },
  }),
});
