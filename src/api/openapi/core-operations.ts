import { z } from 'zod';
import { envelope } from '../schemas/envelopes.ts';
import type { OpenApiRegistry } from './registry.ts';

const Check = z.strictObject({
  status: z.enum(['up', 'down']),
  latency_ms: z.int().min(0),
});

const Health = z
  .strictObject({ status: z.literal('ok'), checks: z.strictObject({ postgres: Check, temporal: Check }) })
  .meta({ id: 'Health' });

/** The service's own routes (health), this document itself and its rendered reference. */
export function registerCoreOperations(openapi: OpenApiRegistry): void {
  openapi.add({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Health check',
    description:
      'Public. 200 when PostgreSQL and Temporal answer; 503 (error envelope with details) otherwise.',
    tags: ['Service'],
    auth: false,
    responses: { 200: { description: 'Healthy', schema: envelope(Health) } },
    errors: [503],
  });
  openapi.add({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This OpenAPI 3.1 document',
    tags: ['Service'],
    auth: false,
    responses: { 200: { description: 'The document', content: { 'application/json': { type: 'object' } } } },
  });
  openapi.add({
    method: 'get',
    path: '/docs',
    operationId: 'apiReference',
    summary: 'This document rendered, with a console to try each operation',
    description:
      'Public. An HTML page (Scalar) that reads `GET /openapi.json`; its console sends your API key.',
    tags: ['Service'],
    auth: false,
    responses: { 200: { description: 'The page', content: { 'text/html': { type: 'string' } } } },
  });
}
