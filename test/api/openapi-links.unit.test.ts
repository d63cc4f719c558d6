import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument } from '../../src/api/openapi-document.ts';
import { OpenApiRegistry } from '../../src/api/openapi/registry.ts';

/**
 * The document's `links`: every operation on a created resource is reachable from the response that created it
 * (and a delivery from the deliveries list), which is what schemathesis's stateful phase and client generators
 * follow. A new route under one of these resources fails here until it is linked.
 */

type Operation = {
  operationId: string;
  parameters?: { name: string; in: string }[];
  responses: Record<
    string,
    { links?: Record<string, { operationId: string; parameters: Record<string, string> }> }
  >;
};
type Doc = { paths: Record<string, Record<string, Operation>> };

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.values(methods).map((op) => ({ path, op })));

function linkedFrom(doc: Doc, operationId: string, status: string): string[] {
  const source = operations(doc).find(({ op }) => op.operationId === operationId)!.op;
  return Object.values(source.responses[status]?.links ?? {}).map((l) => l.operationId);
}

describe('links in the OpenAPI document', () => {
  it('lead from each create (and the deliveries list) to every operation on what it returned', async () => {
    const doc = (await buildOpenApiDocument()) as Doc;
    const under = (pattern: RegExp) =>
      operations(doc)
        .filter(({ path }) => pattern.test(path))
        .map(({ op }) => op.operationId)
        .sort();
    expect(linkedFrom(doc, 'createDocument', '201').sort()).toEqual(
      under(/^\/documents\/\{(id|documentId)\}/),
    );
    expect(linkedFrom(doc, 'createDocumentFromTemplate', '201').sort()).toEqual(
      under(/^\/documents\/\{(id|documentId)\}/),
    );
    expect(linkedFrom(doc, 'createTemplate', '201').sort()).toEqual(under(/^\/templates\/\{id\}/));
    expect(linkedFrom(doc, 'createBulkSend', '201').sort()).toEqual(under(/^\/bulk-sends\/\{id\}/));
    expect(linkedFrom(doc, 'addApprover', '201').sort()).toEqual(under(/^\/approvers\/\{id\}/));
    expect(linkedFrom(doc, 'createWebhook', '201').sort()).toEqual(under(/^\/webhooks\/\{id\}/));
    expect(linkedFrom(doc, 'listWebhookDeliveries', '200')).toEqual(under(/^\/webhooks\/deliveries\/\{id\}/));
    expect(linkedFrom(doc, 'testWebhook', '200')).toEqual(['redeliverWebhookDelivery']);
  });

  it('pass only path parameters the target takes, from the id in the body', async () => {
    const doc = (await buildOpenApiDocument()) as Doc;
    const byId = new Map(operations(doc).map(({ op }) => [op.operationId, op]));
    const links = operations(doc).flatMap(({ op }) =>
      Object.values(op.responses).flatMap((r) => Object.values(r.links ?? {})),
    );
    expect(links.length).toBeGreaterThan(20);
    for (const link of links) {
      const pathParams = (byId.get(link.operationId)?.parameters ?? []).filter((p) => p.in === 'path');
      expect(Object.keys(link.parameters), link.operationId).toEqual(pathParams.map((p) => p.name));
      for (const expression of Object.values(link.parameters))
        expect(expression).toMatch(/^\$response\.body#\/data\/(0\/)?(id|delivery_id)$/);
    }
  });

  it('refuses to render a link to an operation that is not registered', () => {
    const registry = new OpenApiRegistry();
    registry.add({
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Create',
      tags: ['Webhooks'],
      auth: 'webhooks:write',
      responses: { 201: { description: 'Created', schema: z.object({ id: z.string() }) } },
    });
    expect(() => registry.document({ serverUrl: '/api/v1', version: '1' })).toThrow(
      /link GetWebhook of createWebhook names no operation getWebhook/,
    );
  });
});
