import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/test-service.ts';
import { startDocumentsService, type DocumentsService } from './support.ts';

interface OpenApiDoc {
  openapi: string;
  paths: Record<
    string,
    Record<string, { security: unknown[]; 'x-required-scopes'?: string[]; responses: object }>
  >;
  components: { schemas: Record<string, unknown> };
}

let service: DocumentsService;
let account: TestAccount;
let doc: OpenApiDoc;
beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
  const res = await fetch(`${service.baseUrl}/openapi.json`); // public: no Authorization
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  doc = (await res.json()) as OpenApiDoc;
});
afterAll(() => service.close());

describe('GET /api/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every document and approver operation, the envelopes and errors', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /health',
        'GET /openapi.json',
        'GET /documents',
        'POST /documents',
        'GET /documents/{id}',
        'PUT /documents/{id}',
        'DELETE /documents/{id}',
        'GET /documents/{documentId}/approvers',
        'POST /documents/{documentId}/approvers',
        'GET /approvers/{id}',
        'PUT /approvers/{id}',
        'DELETE /approvers/{id}',
      ]),
    );
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Document', 'Approver', 'Error', 'PageMeta']),
    );
    expect(doc.paths['/documents']!.get!['x-required-scopes']).toEqual(['documents:read']);
    expect(doc.paths['/documents']!.post!['x-required-scopes']).toEqual(['documents:write']);
    expect(doc.paths['/documents']!.post!.security).toEqual([{ apiKey: ['documents:write'] }]);
    expect(doc.paths['/health']!.get!.security).toEqual([]);
    expect(doc.paths['/documents']!.post!.responses).toHaveProperty('422');
  });

  it('documents only routes that exist', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        const res = await service.request(path.replace(/\{\w+\}/g, id), {
          method: method.toUpperCase(),
          account,
          ...(method === 'get' || method === 'delete' ? {} : { body: '{}' }),
        });
        // Every operation answers JSON but the rendered reference (GET /docs), an HTML page.
        const body = (
          res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : {}
        ) as { error?: { message: string } };
        expect(body.error?.message ?? '', `${method} ${path}`).not.toMatch(/^No route for/);
        expect(res.status, `${method} ${path}`).not.toBe(405);
      }
    }
  });
});
