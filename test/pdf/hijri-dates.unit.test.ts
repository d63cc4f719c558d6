import { describe, expect, it } from 'vitest';
import { formatHijri, hijriParts } from '../../src/pdf/compose/wording.ts';

/** The certificate's Umm al-Qura dates (Intl's `islamic-umalqura`, Node's full ICU), in Riyadh's civil day. */
describe('Umm al-Qura Hijri dates', () => {
  it.each([
    // Published Umm al-Qura dates: Saudi Arabia's Ramadan 1446 began on Saturday 1 March 2025, 1 Muharram 1447 (the
    // Hijri new year) fell on Thursday 26 June 2025, and the calendar's 1 Ramadan 1447 is Wednesday 18 February 2026.
    { at: '2025-03-01T09:00:00Z', day: '1', month: 'Ramadan', year: '1446' },
    { at: '2025-06-26T09:00:00Z', day: '1', month: 'Muharram', year: '1447' },
    { at: '2026-02-18T09:00:00Z', day: '1', month: 'Ramadan', year: '1447' },
    { at: '2026-11-23T09:00:00Z', day: '13', month: 'Jumada II', year: '1448' },
  ])('$at is $day $month $year AH', ({ at, day, month, year }) => {
    expect(hijriParts(new Date(at), 'en')).toEqual({ day, month, year, era: 'AH' });
  });

  it('follows Riyadh’s day, not UTC’s: 21:30 UTC on 17 February 2026 is already 1 Ramadan 1447 in Riyadh', () => {
    expect(hijriParts(new Date('2026-02-17T20:59:59Z'), 'en')).toMatchObject({ day: '29', month: 'Shaʻban' });
    expect(hijriParts(new Date('2026-02-17T21:30:00Z'), 'en')).toMatchObject({ day: '1', month: 'Ramadan' });
  });

  it('reads in both languages with the time and its zone stated, Western digits as on the rest of the certificate', () => {
    const { en, ar } = formatHijri(new Date('2026-11-23T10:00:00Z'));
    expect(en).toBe('13 Jumada II 1448 AH, 13:00:00 GMT+03:00 (Asia/Riyadh)');
    // Numbers are isolated left-to-right runs inside the Arabic line (U+2066 … U+2069).
    expect(ar).toBe(
      '\u206613\u2069 جمادى الآخرة \u20661448\u2069 هـ، \u206613:00:00 GMT+03:00\u2069 (توقيت الرياض)',
    );
    expect(ar).not.toMatch(/[\u0660-\u0669]/);
  });
});
