import { describe, expect, it } from 'vitest';
import { formFieldsToObject } from '../../src/api/documents/form-fields.ts';

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
});
