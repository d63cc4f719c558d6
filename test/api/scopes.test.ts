import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_SCOPES, type ApiScope } from '../../src/auth/api-key-format.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

interface Operation {
  security: { apiKey?: string[] }[];
  'x-required-scopes'?: string[];
  parameters?: { name: string; in: string; schema?: { type?: string } }[];
}
interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
}
interface Walked {
  name: string;
  method: string;
  path: string;
  scopes: string[];
  op: Operation;
}

/** The only operations anyone may call without a key. */
const PUBLIC = ['GET /health', 'GET /openapi.json', 'GET /docs'];

/**
 * Operations that would hand a key holder a document's existing data, in their answer or by sending it to a phone
 * or URL the key chose: each needs documents:read, whatever else it needs.
 */
const SHOWS_OR_ROUTES_DOCUMENT_DATA = [
  'POST /webhooks',
  'PUT /webhooks/{id}',
  'POST /webhooks/deliveries/{id}/redeliver',
  'PUT /documents/{id}',
  'POST /documents/{id}/send',
  'POST /documents/{id}/void',
  'PUT /approvers/{id}',
  'PUT /templates/{id}',
  'POST /templates/{id}/documents',
  'POST /templates/{id}/bulk-sends',
  // Bearer URLs: the approver's acting link and the signed file's URL.
  'GET /approvers/{id}/link',
  'POST /documents/{id}/download/rotate',
];

let service: TestService;
let operations: Walked[];
/** Keys by the scopes they hold (joined with a space; '' is the key with none). */
const keys = new Map<string, string>();

const label = (scopes: readonly string[]) => [...scopes].sort().join(' ');

/** A key holding exactly `scopes`, of an account of its own (enterprise: the walk sends it a few dozen requests). */
async function keyWith(scopes: readonly ApiScope[]): Promise<void> {
  if (keys.has(label(scopes))) return;
  const { authorization } = await service.createAccount({ plan: 'enterprise', scopes });
  keys.set(label(scopes), authorization);
}

/** The operation's path with every parameter filled: a number for delivery ids, a fresh UUID otherwise. */
function concretePath({ path, op }: Walked): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const param = op.parameters?.find((p) => p.in === 'path' && p.name === name);
    return param?.schema?.type === 'integer' ? '1' : randomUUID();
  });
}

beforeAll(async () => {
  service = await startTestService({ worker: false });
  const res = await fetch(`${service.baseUrl}/openapi.json`);
  const doc = (await res.json()) as OpenApiDoc;
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      name: `${method.toUpperCase()} ${path}`,
      method,
      path,
      scopes: op.security[0]?.apiKey ?? [],
      op,
    })),
  );
  await keyWith([]);
  for (const scope of API_SCOPES) await keyWith([scope]);
  for (const { scopes } of operations) if (scopes.length > 1) await keyWith(scopes as ApiScope[]);
  await keyWith(API_SCOPES);
});
afterAll(() => service.close());

describe('the scope table in GET /openapi.json', () => {
  it('names at least one known scope for every operation but the public ones, the same in both places', () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(operations.filter((o) => o.op.security.length === 0).map((o) => o.name)).toEqual(PUBLIC);
    for (const { name, op, scopes } of operations) {
      if (PUBLIC.includes(name)) continue;
      expect(op.security, name).toEqual([{ apiKey: scopes }]);
      expect(scopes.length, name).toBeGreaterThan(0);
      for (const scope of scopes) expect(API_SCOPES, name).toContain(scope);
      expect(op['x-required-scopes'], name).toEqual(scopes);
    }
  });

  it('lets no read-only key change anything: every operation but a GET needs a write scope', () => {
    for (const { name, method, scopes } of operations) {
      if (method === 'get' || PUBLIC.includes(name)) continue;
      expect(
        scopes.some((s) => s.endsWith(':write')),
        `${name} needs ${scopes.join(', ')}`,
      ).toBe(true);
    }
  });

  it('asks documents:read of every operation that shows or sends out existing document data', () => {
    const byName = new Map(operations.map((o) => [o.name, o.scopes]));
    for (const name of SHOWS_OR_ROUTES_DOCUMENT_DATA)
      expect(byName.get(name), name).toContain('documents:read');
  });
});

describe('every operation, with a key of each scope set', () => {
  it('answers 403 exactly when the key lacks one of the scopes the document names, and says which', async () => {
    const mismatches: string[] = [];
    for (const operation of operations) {
      if (PUBLIC.includes(operation.name)) continue;
      for (const [held, authorization] of keys) {
        const heldScopes = held ? held.split(' ') : [];
        const missing = operation.scopes.filter((s) => !heldScopes.includes(s));
        const hasBody = !['get', 'delete'].includes(operation.method);
        const res = await fetch(`${service.baseUrl}${concretePath(operation)}`, {
          method: operation.method.toUpperCase(),
          headers: { authorization, ...(hasBody && { 'content-type': 'application/json' }) },
          ...(hasBody && { body: '{}' }),
        });
        const body = (await res.json()) as { error?: { message: string } };
        const refused = res.status === 403;
        if (refused !== missing.length > 0) {
          mismatches.push(`${operation.name} with [${held}]: ${res.status} ${body.error?.message ?? ''}`);
        } else if (refused && !missing.every((s) => body.error?.message.includes(`"${s}"`))) {
          mismatches.push(`${operation.name} with [${held}]: the 403 does not name ${missing.join(', ')}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});
