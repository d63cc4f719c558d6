import { z } from 'zod';
import { Timestamp, envelope } from '../schemas/envelopes.ts';
import type { OpenApiRegistry } from './registry.ts';

const Check = z.strictObject({
  status: z.enum(['up', 'down']),
  latency_ms: z.int().min(0),
});

const Health = z
  .strictObject({ status: z.literal('ok'), checks: z.strictObject({ postgres: Check, temporal: Check }) })
  .meta({ id: 'Health' });

const Ping = z
  .strictObject({ id: z.uuid(), workflow_id: z.string(), message: z.string(), recorded_at: Timestamp })
  .meta({ id: 'Ping' });

/** The foundation's routes (health, the ping diagnostic) and this document itself. */
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
    method: 'post',
    path: '/pings',
    operationId: 'createPing',
    summary: 'Diagnostic round trip through Temporal and PostgreSQL',
    tags: ['Service'],
    auth: true,
    body: { json: z.object({ message: z.string().min(1).max(255).optional() }), required: false },
    responses: { 201: { description: 'Recorded by the worker', schema: envelope(Ping) } },
    errors: [400, 422],
  });
  openapi.add({
    method: 'get',
    path: '/pings/{id}',
    operationId: 'getPing',
    summary: 'A recorded ping',
    tags: ['Service'],
    auth: true,
    pathParams: z.object({ id: z.uuid() }),
    responses: { 200: { description: 'The ping', schema: envelope(Ping) } },
    errors: [404],
  });
}
