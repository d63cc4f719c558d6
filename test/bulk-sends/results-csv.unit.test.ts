import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvCell, resultsCsv } from '../../src/features/bulk-sends/results-csv.ts';

describe('the results CSV', () => {
  it('escapes cells a spreadsheet would run as formulas', () => {
    for (const danger of ['=HYPERLINK("x")', '+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1'])
      expect(csvCell(danger).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('Sara')).toBe('Sara');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(null)).toBe('');
  });

  it('quotes commas, quotes and line breaks, and reads back as written', () => {
    const csv = resultsCsv([
      {
        bulkSendId: 'b',
        number: 1,
        status: 'failed',
        errors: { 'employee.name_en': ['=cmd|" /C calc"!A0, "quoted"\nline'], _: ['whole row'] },
        documentId: null,
        documentReference: null,
        documentStatus: null,
      },
      {
        bulkSendId: 'b',
        number: 2,
        status: 'sent',
        errors: null,
        documentId: '6f1c7a2e-0000-4000-8000-000000000001',
        documentReference: 'WQT-2026-000042',
        documentStatus: 'pending',
      },
    ]);
    expect(csv.startsWith('\uFEFFrow,status,')).toBe(true);
    const records: string[][] = parse(csv.slice(1), { relax_column_count: false });
    expect(records).toHaveLength(3);
    expect(records[1]![5]).toBe(`employee.name_en: =cmd|" /C calc"!A0, "quoted"\nline | whole row`);
    expect(records[2]!.slice(0, 5)).toEqual([
      '2',
      'sent',
      '6f1c7a2e-0000-4000-8000-000000000001',
      'WQT-2026-000042',
      'pending',
    ]);
    // The formula in a later cell of the message is harmless: the cell itself starts with text.
    expect(csvCell('=1').startsWith("'")).toBe(true);
  });
});
