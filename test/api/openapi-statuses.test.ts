import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/test-service.ts';

interface Operation {
  parameters: { name: string; in: string; schema: { pattern?: string; maxLength?: number } }[];
  requestBody?: {
    required: boolean;
    content: Record<string, { schema: { required?: string[] }; encoding?: Record<string, unknown> }>;
  };
  responses: Record<string, unknown>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, { headers: Record<string, unknown> }> };
}

let service: TestService;
let doc: Doc;
beforeAll(async () => {
  service = await startTestService({ worker: false });
  doc = (await (await service.request('/openapi.json')).json()) as Doc;
});
afterAll(() => service.close());

const statuses = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses);

describe('the OpenAPI document states every status an operation answers', () => {
  it('every protected POST takes Idempotency-Key with its pattern, and lists 409 and 422 for it', () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      const post = methods.post;
      if (!post || !statuses(path, 'post').includes('401')) continue;
      const header = post.parameters.find((p) => p.name === 'Idempotency-Key');
      expect(header, path).toMatchObject({ in: 'header', schema: { maxLength: 255 } });
      const pattern = new RegExp(header!.schema.pattern!);
      expect(
        ['0f8fab3c-uuid', '', '~!x'].every((k) => pattern.test(k)),
        path,
      ).toBe(true);
      expect(
        ['with space', 'é', 'tab\t'].some((k) => pattern.test(k)),
        path,
      ).toBe(false);
      expect(statuses(path, 'post'), path).toEqual(expect.arrayContaining(['400', '409', '413', '422']));
    }
  });

  it('uploads: 503 with Retry-After, 413, and the file part required on creation', () => {
    for (const [path, method] of [
      ['/documents', 'post'],
      ['/documents/{id}', 'put'],
    ] as const) {
      expect(statuses(path, method), `${method} ${path}`).toEqual(
        expect.arrayContaining(['413', '422', '503']),
      );
    }
    expect(doc.components.responses.E503!.headers).toHaveProperty('Retry-After');
    const create = doc.paths['/documents']!.post!.requestBody!;
    expect(create.required).toBe(true);
    expect(create.content['multipart/form-data']!.schema.required).toEqual(['file']);
    expect(create.content['multipart/form-data']!.encoding).toEqual({
      file: { contentType: 'application/pdf' },
      approvers: { contentType: 'application/json' },
      cc: { contentType: 'application/json' },
    });
  });

  it('remind lists its cooldown (429) and cap (409); an empty PUT is allowed (it changes nothing)', () => {
    expect(statuses('/approvers/{id}/remind', 'post')).toEqual(expect.arrayContaining(['409', '429']));
    for (const path of ['/documents/{id}', '/approvers/{id}', '/webhooks/{id}'])
      expect(doc.paths[path]!.put!.requestBody!.required, path).toBe(false);
  });

  it('the document and its download tell what signed the PDF (Signature)', () => {
    const schemas = (doc as unknown as { components: { schemas: Record<string, SchemaObject> } }).components
      .schemas;
    const signature = schemas.Signature!;
    const variant = (signature.anyOf ?? [signature]).find((s) => s.type === 'object')!;
    expect(variant.required).toEqual(['level', 'signed_at', 'certificate', 'timestamp_authority']);
    expect(variant.properties!.certificate!.required).toEqual(['subject', 'issuer', 'serial', 'not_after']);
    for (const name of ['Document', 'Download'])
      expect(schemas[name]!.properties!.signature, name).toEqual({ $ref: '#/components/schemas/Signature' });
  });
});

interface SchemaObject {
  type?: string;
  anyOf?: SchemaObject[];
  required?: string[];
  properties?: Record<string, SchemaObject>;
  $ref?: string;
}
