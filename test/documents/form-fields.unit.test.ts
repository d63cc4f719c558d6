import { describe, expect, it } from 'vitest';
import { formFieldsToObject } from '../../src/features/documents/form-fields.ts';

describe('formFieldsToObject', () => {
  it('nests approvers[N][field] parts in index order and drops empty parts', () => {
    expect(
      formFieldsToObject([
        ['title', 'T'],
        ['approvers[1][name]', 'B'],
        ['approvers[0][name]', 'A'],
        ['approvers[0][phone]', '966501234567'],
        ['approvers[1][role_ar]', ''],
        ['department', ''],
      ]),
    ).toEqual({
      value: { title: 'T', approvers: [{ name: 'A', phone: '966501234567' }, { name: 'B' }] },
      errors: {},
    });
  });

  it('refuses gaps in the approver indexes and other spellings', () => {
    expect(formFieldsToObject([['approvers[1][name]', 'B']]).errors).toEqual({
      approvers: ['approvers must be numbered from approvers[0] without gaps'],
    });
    expect(formFieldsToObject([['approvers.0.name', 'B']]).errors).toEqual({
      'approvers.0.name': ['approver fields are sent as approvers[N][field], e.g. approvers[0][phone]'],
    });
  });

  it('refuses more than 50 approvers', () => {
    const fields: [string, string][] = Array.from({ length: 51 }, (_, i) => [
      `approvers[${i}][name]`,
      `A${i}`,
    ]);
    expect(formFieldsToObject(fields).errors).toEqual({
      approvers: ['A document can have at most 50 approvers'],
    });
  });

  it('takes the approvers as one JSON part, the form the OpenAPI document describes', () => {
    const approvers = [{ name: 'A', phone: '966501234567', page: 1 }];
    expect(
      formFieldsToObject([
        ['title', 'T'],
        ['approvers', JSON.stringify(approvers)],
      ]),
    ).toEqual({ value: { title: 'T', approvers }, errors: {} });
    expect(formFieldsToObject([['approvers', '[{"name": ']]).errors).toEqual({
      approvers: [
        'the approvers part must hold a JSON array of approvers (or send approvers[N][field] parts instead)',
      ],
    });
    expect(
      formFieldsToObject([
        ['approvers', '[]'],
        ['approvers[0][name]', 'A'],
      ]).errors,
    ).toEqual({
      approvers: ['give the approvers either as one JSON part or as approvers[N][field] parts, not both'],
    });
  });

  it('makes a field given twice a list (which single-valued fields refuse) and skips nameless parts', () => {
    expect(
      formFieldsToObject([
        ['department', 'hr'],
        ['department', 'legal'],
        ['approvers[0][phone]', '966501234567'],
        ['approvers[0][phone]', '966551234567'],
        [undefined as unknown as string, 'nameless'],
        ['__proto__', 'x'],
      ]),
    ).toEqual({
      value: {
        department: ['hr', 'legal'],
        approvers: [{ phone: ['966501234567', '966551234567'] }],
        ['__proto__']: 'x',
      },
      errors: {},
    });
  });
});

describe('formFieldsToObject: cc recipients', () => {
  it('nests cc[N][field] parts in index order, as approvers', () => {
    expect(
      formFieldsToObject([
        ['cc[1][phone]', '966551234567'],
        ['cc[0][phone]', '966501234567'],
        ['cc[0][language]', 'ar'],
        ['cc[1][name]', 'Finance'],
      ]),
    ).toEqual({
      value: {
        cc: [
          { phone: '966501234567', language: 'ar' },
          { phone: '966551234567', name: 'Finance' },
        ],
      },
      errors: {},
    });
  });

  it('takes cc as one JSON part; refuses both forms, two JSON parts, gaps, misspellings and more than 10', () => {
    const cc = [{ phone: '966501234567' }];
    expect(formFieldsToObject([['cc', JSON.stringify(cc)]])).toEqual({ value: { cc }, errors: {} });
    expect(
      formFieldsToObject([
        ['cc', '[]'],
        ['cc[0][phone]', '966501234567'],
      ]).errors,
    ).toEqual({ cc: ['give the cc recipients either as one JSON part or as cc[N][field] parts, not both'] });
    expect(
      formFieldsToObject([
        ['cc', '[]'],
        ['cc', '[]'],
      ]).errors,
    ).toEqual({ cc: ['give the cc recipients once: one part holding the JSON array'] });
    expect(formFieldsToObject([['cc', '[{"phone": ']]).errors).toEqual({
      cc: [
        'the cc part must hold a JSON array of recipients {phone, language, name} (or send cc[N][field] parts instead)',
      ],
    });
    expect(formFieldsToObject([['cc[1][phone]', '966501234567']]).errors).toEqual({
      cc: ['cc must be numbered from cc[0] without gaps'],
    });
    expect(formFieldsToObject([['cc.0.phone', '966501234567']]).errors).toEqual({
      'cc.0.phone': ['cc recipients are sent as cc[N][field], e.g. cc[0][phone]'],
    });
    const eleven: [string, string][] = Array.from({ length: 11 }, (_, i) => [
      `cc[${i}][phone]`,
      `96650000000${i}`,
    ]);
    expect(formFieldsToObject(eleven).errors).toEqual({
      cc: ['A document can have at most 10 cc recipients'],
    });
    // A field that only starts with the letters is no cc part.
    expect(formFieldsToObject([['ccx', 'y']]).value).toEqual({ ccx: 'y' });
  });

  it('keeps a prototype key among cc fields an ordinary (own) field', () => {
    const { value } = formFieldsToObject([['cc[0][__proto__]', 'x']]);
    const [entry] = value.cc as Record<string, unknown>[];
    expect(Object.getPrototypeOf(entry)).toBeNull();
    expect(Object.hasOwn(entry!, '__proto__')).toBe(true);
  });
});
