import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pathId } from '../../src/api/route-helpers.ts';
import { AppError } from '../../src/errors.ts';
import type { AppContext } from '../../src/http/context.ts';

const contextWith = (id: string | undefined) => ({ params: { id } }) as unknown as AppContext;

describe('pathId', () => {
  it('accepts exactly the ids z.uuid() accepts, and answers every other a 404 naming the resource', () => {
    const samples = [
      '0b6f0b0e-6f3c-4c8e-9a5e-2f1d3c4b5a69',
      '0B6F0B0E-6F3C-4C8E-9A5E-2F1D3C4B5A69',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '0b6f0b0e-6f3c-0c8e-9a5e-2f1d3c4b5a69', // version 0
      '0b6f0b0e-6f3c-4c8e-7a5e-2f1d3c4b5a69', // variant outside RFC 9562
      '0b6f0b0e-6f3c-4c8e-9a5e-2f1d3c4b5a69\n',
      ' 0b6f0b0e-6f3c-4c8e-9a5e-2f1d3c4b5a69',
      '0b6f0b0e6f3c4c8e9a5e2f1d3c4b5a69',
      '__proto__',
      'constructor',
      '',
      'a'.repeat(100_000),
      undefined,
    ];
    const accepted = samples.filter((id) => z.uuid().safeParse(id).success);
    expect(accepted).toHaveLength(4);
    for (const id of samples) {
      if (accepted.includes(id)) {
        expect(pathId(contextWith(id), 'id', 'Document')).toBe(id);
      } else {
        let thrown: unknown;
        try {
          pathId(contextWith(id), 'id', 'Document');
        } catch (err) {
          thrown = err;
        }
        expect(thrown, String(id).slice(0, 40)).toBeInstanceOf(AppError);
        expect((thrown as AppError).status).toBe(404);
        expect((thrown as AppError).message).toContain('Document');
      }
    }
  });
});
