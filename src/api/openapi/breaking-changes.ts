/**
 * What a new OpenAPI document breaks for clients written against an older one. Schemas are compared where the
 * operations use them ($refs followed), so a change is judged by which way the data flows: a field newly required
 * in a request, or a value dropped from a request enum, breaks callers; a field a response no longer promises, or
 * a success status it no longer answers, breaks readers. Adding operations, optional fields, statuses or enum
 * values breaks nothing here (clients are expected to ignore what they do not know).
 */
type Json = Record<string, unknown>;
type Direction = 'request' | 'response';

interface SchemaFacts {
  required: Set<string>;
  enum: Set<string>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const asObject = (value: unknown): Json | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

function resolve(doc: Json, node: Json): Json {
  const ref = node.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
  let target: unknown = doc;
  for (const part of ref.slice(2).split('/'))
    target = asObject(target)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return asObject(target) ?? {};
}

/** Every schema node reached from `root`, keyed by its path from the operation (the same in both documents). */
function collectSchemas(
  doc: Json,
  root: unknown,
  at: string,
  out: Map<string, SchemaFacts>,
  seen: string[] = [],
) {
  const raw = asObject(root);
  if (!raw) return;
  const ref = typeof raw.$ref === 'string' ? raw.$ref : undefined;
  if (ref && seen.includes(ref)) return; // a recursive schema: its first pass covered it
  const node = resolve(doc, raw);
  const trail = ref ? [...seen, ref] : seen;
  out.set(at, {
    required: new Set(Array.isArray(node.required) ? (node.required as string[]) : []),
    enum: new Set(Array.isArray(node.enum) ? node.enum.map((v) => JSON.stringify(v)) : []),
  });
  for (const [name, child] of Object.entries(asObject(node.properties) ?? {}))
    collectSchemas(doc, child, `${at}.${name}`, out, trail);
  if (node.items) collectSchemas(doc, node.items, `${at}[]`, out, trail);
  if (asObject(node.additionalProperties))
    collectSchemas(doc, node.additionalProperties, `${at}{}`, out, trail);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(node[key]))
      (node[key] as unknown[]).forEach((child, i) =>
        collectSchemas(doc, child, `${at}<${key}${i}>`, out, trail),
      );
}

interface OperationFacts {
  statuses: Set<string>;
  requiredParams: Set<string>;
  schemas: Record<Direction, Map<string, SchemaFacts>>;
}

function operations(doc: Json): Map<string, OperationFacts> {
  const out = new Map<string, OperationFacts>();
  for (const [path, item] of Object.entries(asObject(doc.paths) ?? {})) {
    for (const method of METHODS) {
      const op = asObject(asObject(item)?.[method]);
      if (!op) continue;
      const facts: OperationFacts = {
        statuses: new Set(Object.keys(asObject(op.responses) ?? {})),
        requiredParams: new Set(),
        schemas: { request: new Map(), response: new Map() },
      };
      for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
        const param = resolve(doc, asObject(p) ?? {});
        const name = `${String(param.in)} ${String(param.name)}`;
        if (param.required === true) facts.requiredParams.add(name);
        collectSchemas(doc, param.schema, `parameter ${name}`, facts.schemas.request);
      }
      const body = asObject(op.requestBody);
      for (const [media, content] of Object.entries(asObject(body?.content) ?? {}))
        collectSchemas(doc, asObject(content)?.schema, `body ${media}`, facts.schemas.request);
      for (const [status, response] of Object.entries(asObject(op.responses) ?? {})) {
        const resolved = resolve(doc, asObject(response) ?? {});
        for (const [media, content] of Object.entries(asObject(resolved.content) ?? {}))
          collectSchemas(doc, asObject(content)?.schema, `${status} ${media}`, facts.schemas.response);
      }
      out.set(`${method.toUpperCase()} ${path}`, facts);
    }
  }
  return out;
}

const added = (before: Set<string>, after: Set<string>) => [...after].filter((v) => !before.has(v));
const removed = (before: Set<string>, after: Set<string>) => [...before].filter((v) => !after.has(v));

function schemaChanges(
  op: string,
  direction: Direction,
  before: OperationFacts,
  after: OperationFacts,
): string[] {
  const out: string[] = [];
  for (const [at, old] of before.schemas[direction]) {
    const now = after.schemas[direction].get(at);
    if (!now) continue;
    if (direction === 'request') {
      for (const field of added(old.required, now.required))
        out.push(`${op}: request field ${at}.${field} is now required`);
      if (old.enum.size > 0)
        for (const value of removed(old.enum, now.enum)) out.push(`${op}: ${at} no longer accepts ${value}`);
    } else {
      for (const field of removed(old.required, now.required))
        out.push(`${op}: response field ${at}.${field} is no longer always present`);
    }
  }
  return out;
}

/** Each change of `after` that breaks a client of `before`, in words; empty when none does. */
export function breakingChanges(before: Json, after: Json): string[] {
  const old = operations(before);
  const now = operations(after);
  const out: string[] = [];
  for (const [op, was] of old) {
    const is = now.get(op);
    if (!is) {
      out.push(`${op}: operation removed`);
      continue;
    }
    for (const status of removed(was.statuses, is.statuses))
      if (status.startsWith('2')) out.push(`${op}: no longer answers ${status}`);
    for (const param of added(was.requiredParams, is.requiredParams))
      out.push(`${op}: parameter ${param} is now required`);
    out.push(...schemaChanges(op, 'request', was, is), ...schemaChanges(op, 'response', was, is));
  }
  return out;
}
