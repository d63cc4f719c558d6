import { describe, expect, it } from 'vitest';
import { normalizePhone, PHONE_MESSAGES } from '../../src/features/documents/phone.ts';

describe('normalizePhone', () => {
  it.each([
    ['966501234567', '966501234567'],
    ['+966501234567', '966501234567'],
    ['+966 50 123 4567', '966501234567'],
    ['00966501234567', '966501234567'],
    ['(+966) 50-123-4567', '966501234567'],
    ['  966501234567 ', '966501234567'],
    ['+447911123456', '447911123456'],
    ['12025550143', '12025550143'],
  ])('accepts %j as %s', (input, expected) => {
    expect(normalizePhone(input)).toEqual({ ok: true, phone: expected });
  });

  it.each([
    ['0501234567', PHONE_MESSAGES.format], // national form: no country code
    ['', PHONE_MESSAGES.format],
    ['abc', PHONE_MESSAGES.format],
    ['+96650123456x', PHONE_MESSAGES.format],
    ['9665012345678901', PHONE_MESSAGES.format], // longer than E.164 allows
    ['++966501234567', PHONE_MESSAGES.format],
    ['9665012345', PHONE_MESSAGES.invalid], // too short for Saudi Arabia
    ['96650123456789', PHONE_MESSAGES.invalid], // too long for Saudi Arabia
    ['15555550123', PHONE_MESSAGES.invalid], // 555 numbers are not assigned
    ['9990001112223', PHONE_MESSAGES.invalid], // no such country code
  ])('refuses %j', (input, message) => {
    expect(normalizePhone(input)).toEqual({ ok: false, message });
  });
});
