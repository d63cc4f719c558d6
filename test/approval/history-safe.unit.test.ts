import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { historySafeError, personalData, redact } from '../../src/features/approval/history-safe.ts';
import type { Approver } from '../../src/features/documents/approvers-store.ts';

/** What an activity's failure may carry into a workflow history. */
const approver = {
  id: 'a1b2c3d4-0000-4000-8000-000000000001',
  phone: '966501234567',
  nameAr: 'سارة المطيري',
  nameEn: 'Sara Almutairi',
  typedName: 'S. Almutairi',
} as Approver;
const data = personalData([approver]);
const id = `approver ${approver.id}`;

describe('redacting approvers from failure messages', () => {
  it.each([
    ['+966501234567', `refused +966501234567 (code 131026)`],
    ['the digits', `refused 966501234567`],
    ['the local form', `0501234567 is not on WhatsApp`],
    ['the national form with spaces', `050 123 4567 is not on WhatsApp`],
    ['the Arabic name', `The image of سارة المطيري could not be read`],
    ['the English name, in any case', `The image of SARA ALMUTAIRI could not be read`],
    ['the typed name', `typed S. Almutairi`],
  ])('%s', (_, message) => {
    const out = redact(message, data);
    expect(out).toContain(id);
    expect(out).not.toMatch(/501234567|سارة|almutairi/i);
  });

  it('redacts the cc recipients too, by their place in the list', () => {
    const withCc = personalData(
      [approver],
      [
        { phone: '447911123456', language: null, name: null },
        { phone: '966551234567', language: 'ar', name: 'ليلى الحربي' },
      ],
    );
    expect(redact('to +447911123456 and 0551234567 (ليلى الحربي), cc of +966501234567', withCc)).toBe(
      `to cc recipient 1 and cc recipient 2 (cc recipient 2), cc of ${id}`,
    );
  });

  it('leaves a failure that names nobody as it is', () => {
    const err = new Error('connection refused');
    expect(historySafeError(err, data)).toBe(err);
  });

  it('replaces one that does with a failure of the same type and retryability, without its cause', () => {
    const cause = new Error('to +966501234567');
    const err = Object.assign(new Error('WhatsApp Cloud API unreachable: to +966501234567', { cause }), {
      name: 'WhatsAppSendError',
    });
    const safe = historySafeError(err, data) as ApplicationFailure;
    expect(safe).toBeInstanceOf(ApplicationFailure);
    expect(safe).toMatchObject({ type: 'WhatsAppSendError', nonRetryable: false });
    expect(safe.message).toBe(`WhatsApp Cloud API unreachable: to ${id}`);
    expect(safe.cause).toBeUndefined();
    expect(safe.stack).not.toContain('501234567');

    const permanent = ApplicationFailure.create({
      type: 'FinalizeInputError',
      message: 'The placement of Sara Almutairi does not fit',
      nonRetryable: true,
    });
    expect(historySafeError(permanent, data)).toMatchObject({
      type: 'FinalizeInputError',
      nonRetryable: true,
      message: `The placement of ${id} does not fit`,
    });
    // Only the cause names them: still replaced.
    const wrapped = new Error('finalization failed', { cause });
    expect(historySafeError(wrapped, data)).toBeInstanceOf(ApplicationFailure);
  });
});
