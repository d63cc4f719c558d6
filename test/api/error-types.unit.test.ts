import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi-document.ts';
import { ERROR_STATUS, ERROR_TYPES, ERROR_TYPE_NAMES } from '../../src/errors.ts';

const SRC = new URL('../../src/', import.meta.url);

async function sourceTexts(): Promise<string> {
  const files = await readdir(SRC, { recursive: true });
  const texts = await Promise.all(
    files
      .filter((f) => f.endsWith('.ts') && f !== 'errors.ts')
      .map((f) => readFile(path.join(SRC.pathname, f), 'utf8')),
  );
  return texts.join('\n');
}

describe('error types', () => {
  it('the document lists every type as the enum of error.type', async () => {
    const doc = (await buildOpenApiDocument()) as {
      components: {
        schemas: { Error: { properties: { error: { properties: { type: { enum: string[] } } } } } };
      };
    };
    expect(doc.components.schemas.Error.properties.error.properties.type.enum).toEqual(ERROR_TYPE_NAMES);
  });

  it('every type is raised somewhere, so the enum promises no cause the code cannot produce', async () => {
    const source = await sourceTexts();
    const unused = ERROR_TYPE_NAMES.filter((type) => !source.includes(`'${type}'`));
    expect(unused).toEqual([]);
  });

  it('the 409s a document meets are each their own type, and every type maps to a status', () => {
    const conflicts = [
      'not_a_draft',
      'document_expired',
      'idempotency_key_in_flight',
      'too_many_approvers',
      'already_sent',
    ];
    for (const type of conflicts) expect(ERROR_TYPES[type as keyof typeof ERROR_TYPES]).toBe('conflict');
    for (const code of Object.values(ERROR_TYPES)) expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
  });
});
