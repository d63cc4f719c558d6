import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { breakingChanges } from '../../src/api/openapi/breaking-changes.ts';

type Json = Record<string, unknown>;

const committed = async (): Promise<Json> =>
  JSON.parse(await readFile(new URL('../../openapi.json', import.meta.url), 'utf8')) as Json;

/** The object at `keys` under `node`; fails the test when the document has no such object. */
function at(node: Json, ...keys: (string | number)[]): Json {
  let here: unknown = node;
  for (const key of keys) here = (here as Record<string | number, unknown> | undefined)?.[key];
  if (!here || typeof here !== 'object') throw new Error(`no object at ${keys.join('.')}`);
  return here as Json;
}

/** The multipart create body's schema (a $ref or inline), which the edits below change. */
function createBody(doc: Json): Json {
  const schema = at(
    doc,
    'paths',
    '/documents',
    'post',
    'requestBody',
    'content',
    'multipart/form-data',
    'schema',
  );
  return typeof schema.$ref === 'string'
    ? at(doc, 'components', 'schemas', schema.$ref.split('/').pop()!)
    : schema;
}

describe('breaking-change check between two OpenAPI documents', () => {
  it('finds nothing between the committed document and itself', async () => {
    expect(breakingChanges(await committed(), await committed())).toEqual([]);
  });

  it('catches a removed operation', async () => {
    const after = await committed();
    delete at(after, 'paths', '/documents/{id}').delete;
    expect(breakingChanges(await committed(), after)).toEqual(['DELETE /documents/{id}: operation removed']);
  });

  it('catches a newly required request field, and lets an optional one through', async () => {
    const optional = await committed();
    at(createBody(optional), 'properties').note = { type: 'string' };
    expect(breakingChanges(await committed(), optional)).toEqual([]);

    const required = await committed();
    at(createBody(required), 'properties').note = { type: 'string' };
    (createBody(required).required as string[]).push('note');
    expect(breakingChanges(await committed(), required)).toEqual([
      'POST /documents: request field body multipart/form-data.note is now required',
    ]);
  });

  it('catches a dropped request enum value, a removed success status and a response field no longer promised', async () => {
    const after = await committed();
    at(createBody(after), 'properties', 'workflow_type', 'anyOf', 1).enum = ['sequential'];
    delete at(after, 'paths', '/documents', 'post', 'responses')['201'];
    const health = at(
      after,
      'paths',
      '/health',
      'get',
      'responses',
      '200',
      'content',
      'application/json',
      'schema',
    );
    health.required = (health.required as string[]).filter((f) => f !== 'data');
    expect(breakingChanges(await committed(), after).sort()).toEqual([
      'GET /health: response field 200 application/json.data is no longer always present',
      'POST /documents: body multipart/form-data.workflow_type<anyOf1> no longer accepts "parallel"',
      'POST /documents: no longer answers 201',
    ]);
  });
});
