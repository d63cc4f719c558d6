import { describe, expect, it } from 'vitest';
import { formFieldsToObject } from '../../src/features/documents/form-fields.ts';
import { parseJson } from '../../src/http/raw-body.ts';
import { issuesToDetails } from '../../src/domain/validation.ts';
import { addDetail, AppError, mergeDetails, newDetails } from '../../src/errors.ts';
import { withoutPrototypes } from '../../src/http/untrusted.ts';

const HOSTILE = Object.getOwnPropertyNames(Object.prototype);

function ownEntries(value: object): [string, unknown][] {
  return Object.keys(value).map((k) => [k, (value as Record<string, unknown>)[k]]);
}

describe('error details keyed by names a client chose', () => {
  it.each(HOSTILE)('%s is an ordinary key of addDetail and mergeDetails', (name) => {
    const details = newDetails();
    addDetail(details, name, 'first');
    addDetail(details, name, 'second');
    expect(Object.getPrototypeOf(details)).toBeNull();
    expect(ownEntries(details)).toEqual([[name, ['first', 'second']]]);

    const merged = mergeDetails(details, details, { file: ['f'] });
    expect(ownEntries(merged)).toEqual([
      [name, ['first', 'second', 'first', 'second']],
      ['file', ['f']],
    ]);
    expect(JSON.parse(JSON.stringify(merged))).toEqual(
      JSON.parse(`{"${name}":["first","second","first","second"],"file":["f"]}`),
    );
  });

  it('addDetail is safe even on a plain object', () => {
    const plain: Record<string, string[]> = {};
    for (const name of HOSTILE) addDetail(plain, name, `m-${name}`);
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(ownEntries(plain)).toEqual(HOSTILE.map((n) => [n, [`m-${n}`]]));
  });

  it('AppError keeps a prototype-free copy of its details', () => {
    const given = { constructor: ['c'] } as unknown as Record<string, string[]>;
    const err = AppError.validation(given);
    expect(Object.getPrototypeOf(err.details)).toBeNull();
    expect(ownEntries(err.details)).toEqual([['constructor', ['c']]]);
    addDetail(err.details, 'toString', 'later');
    expect(ownEntries(given)).toEqual([['constructor', ['c']]]);
  });

  it('zod issue paths with hostile keys become details', () => {
    const details = issuesToDetails([
      { code: 'custom', path: ['__proto__'], message: 'a', input: undefined },
      { code: 'custom', path: ['approvers', 0, 'constructor'], message: 'b', input: undefined },
      { code: 'custom', path: [Symbol('s')], message: 'c', input: undefined },
    ]);
    expect(ownEntries(details)).toEqual([
      ['__proto__', ['a']],
      ['approvers.0.constructor', ['b']],
      ['Symbol(s)', ['c']],
    ]);
  });
});

describe('multipart fields as an object', () => {
  it.each(HOSTILE)('a field and an approver field named %s stay own, inert entries', (name) => {
    const { value, errors } = formFieldsToObject([
      [name, 'x'],
      ['approvers[0][phone]', '966501234567'],
      [`approvers[0][${name}]`, 'y'],
    ]);
    expect(Object.getPrototypeOf(value)).toBeNull();
    expect(Object.hasOwn(value, name)).toBe(true);
    expect(value[name]).toBe('x');
    const approvers = value.approvers as Record<string, string>[] | undefined;
    if (/^[a-z_]+$/.test(name)) {
      expect(Object.getPrototypeOf(approvers![0])).toBeNull();
      expect(ownEntries(approvers![0]!)).toEqual([
        ['phone', '966501234567'],
        [name, 'y'],
      ]);
      expect(ownEntries(errors)).toEqual([]);
    } else {
      expect(ownEntries(errors)).toEqual([
        [
          `approvers[0][${name}]`,
          ['approver fields are sent as approvers[N][field], e.g. approvers[0][phone]'],
        ],
      ]);
    }
  });
});

describe('parsed JSON without prototypes', () => {
  it('every object at every depth has no prototype; keys and values are kept', () => {
    const text = `{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"list":[{"toString":1},[{"valueOf":2}]],"n":null}`;
    const parsed = parseJson(Buffer.from(text)) as Record<string, unknown>;
    expect(JSON.stringify(parsed)).toBe(text);
    const objects: object[] = [];
    const walk = (v: unknown) => {
      if (v && typeof v === 'object') {
        if (!Array.isArray(v)) objects.push(v);
        Object.values(v).forEach(walk);
      }
    };
    walk(parsed);
    expect(objects).toHaveLength(6);
    for (const o of objects) expect(Object.getPrototypeOf(o)).toBeNull();
    expect(Array.isArray(parsed.list)).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('deep nesting does not exhaust the stack', () => {
    const depth = 200_000;
    const text = `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
    const copy = withoutPrototypes(JSON.parse(text)) as { a: unknown[] };
    let node: unknown = copy;
    let seen = 0;
    while (node && typeof node === 'object' && !Array.isArray(node)) {
      seen++;
      node = (node as { a: unknown[] }).a[0];
    }
    expect(seen).toBe(depth);
    expect(node).toBe(1);
  });

  it('values that are not plain JSON containers are kept as they are', () => {
    const date = new Date(0);
    const buffer = Buffer.from('x');
    const copy = withoutPrototypes({ date, buffer, text: 's' }) as Record<string, unknown>;
    expect(copy.date).toBe(date);
    expect(copy.buffer).toBe(buffer);
    expect(withoutPrototypes('s')).toBe('s');
    expect(withoutPrototypes(null)).toBeNull();
  });
});
