// The generated half of the Python client: a TypedDict or alias per component schema of the OpenAPI document and
// one method per operation, on a mixin whose `_request` the hand-written client (wathiq_client/client.py)
// provides. Types are written as strings, so the module never depends on the order of its definitions.

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function pythonModule(document, header) {
  const schemas = document.components?.schemas ?? {};
  const lines = [
    `# ${header}`,
    '"""Types and operations of the Wathiq API, from its OpenAPI document (version ' +
      `${document.info?.version ?? '?'})."""`,
    '',
    'from __future__ import annotations',
    '',
    'from typing import Any, Literal, Optional, TypeAlias, TypedDict, Union  # noqa: F401',
    'from urllib.parse import quote',
    '',
    '',
  ];
  for (const [name, schema] of Object.entries(schemas)) lines.push(...schemaDefinition(name, schema), '', '');
  lines.push(...operationsClass(document));
  return lines.join('\n').replace(/\n{3,}$/, '\n') + (lines.at(-1) === '' ? '' : '\n');
}

function schemaDefinition(name, schema) {
  const doc = schema.description ? [`# ${oneLine(schema.description)}`] : [];
  if (schema.type === 'object' && schema.properties) {
    const fields = Object.entries(schema.properties).map(
      ([key, value]) => `        ${JSON.stringify(key)}: ${JSON.stringify(pyType(value))},`,
    );
    return [
      ...doc,
      `${name} = TypedDict(`,
      `    ${JSON.stringify(name)},`,
      '    {',
      ...fields,
      '    },',
      '    total=False,',
      ')',
    ];
  }
  return [...doc, `${name}: TypeAlias = ${JSON.stringify(pyType(schema))}`];
}

/** A JSON Schema as a Python type expression. */
export function pyType(schema) {
  if (!schema || typeof schema !== 'object') return 'Any';
  if (schema.$ref) return schema.$ref.split('/').pop();
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return union(variants.map(pyType));
  if ('const' in schema) return `Literal[${JSON.stringify(schema.const)}]`;
  if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map((v) => JSON.stringify(v)).join(', ')}]`;
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => pyType({ ...schema, type })));
  switch (schema.type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'array':
      return `list[${pyType(schema.items)}]`;
    case 'object':
      return 'dict[str, Any]';
    default:
      return 'Any';
  }
}

function union(types) {
  const unique = [...new Set(types)];
  if (unique.includes('Any')) return 'Any';
  return unique.length === 1 ? unique[0] : `Union[${unique.join(', ')}]`;
}

const oneLine = (text) => String(text).replace(/\s+/g, ' ').trim();

function snake(id) {
  return id
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toLowerCase();
}

function operationsClass(document) {
  const lines = [
    'class GeneratedOperations:',
    '    """One method per operation of the document; `_request` sends it (see client.Client)."""',
    '',
    '    def _request(',
    '        self,',
    '        method: str,',
    '        path: str,',
    '        *,',
    '        query: Optional[dict[str, Any]] = None,',
    '        json: Any = None,',
    '        multipart: Optional[list[tuple[str, Any]]] = None,',
    '        headers: Optional[dict[str, str]] = None,',
    '        envelope: bool = True,',
    '    ) -> Any:',
    '        raise NotImplementedError("a client class provides _request")',
  ];
  for (const [route, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (op?.operationId) lines.push('', ...operationMethod(route, method, op, item.parameters ?? []));
    }
  }
  return [...lines, ''];
}

function operationMethod(route, method, op, shared) {
  const params = [...shared, ...(op.parameters ?? [])].filter((p) => !p.$ref);
  const pathParams = params.filter((p) => p.in === 'path');
  const query = params.filter((p) => p.in === 'query');
  const headers = params.filter((p) => p.in === 'header');
  const content = op.requestBody?.content ?? {};
  const args = ['self', ...pathParams.map((p) => `${snake(p.name)}: str`)];
  const keywords = [];
  let body = '';
  if (content['application/json']) {
    const type = pyType(content['application/json'].schema);
    keywords.push(
      op.requestBody.required
        ? `body: ${JSON.stringify(type)}`
        : `body: ${JSON.stringify(`Optional[${type}]`)} = None`,
    );
    body = ', json=body';
  } else if (content['multipart/form-data']) {
    keywords.push('parts: list[tuple[str, Any]]');
    body = ', multipart=parts';
  }
  for (const p of query)
    keywords.push(`${snake(p.name)}: ${JSON.stringify(`Optional[${pyType(p.schema)}]`)} = None`);
  for (const p of headers) keywords.push(`${snake(p.name)}: Optional[str] = None`);
  const success = successSchema(op);
  const enveloped = Boolean(success?.properties?.success);
  const paged = Boolean(success?.properties?.meta);
  const returns = !enveloped || paged ? 'dict[str, Any]' : pyType(success.properties.data);
  const signature = [...args, ...(keywords.length ? ['*', ...keywords] : [])].join(', ');
  const pathExpr = route.replace(/\{([^}]+)\}/g, (_, name) => `{quote(${snake(name)}, safe='')}`);
  const summary = oneLine(op.summary ?? `${method.toUpperCase()} ${route}`);
  const lines = [
    `    def ${snake(op.operationId)}(${signature}) -> ${JSON.stringify(returns)}:`,
    `        """${method.toUpperCase()} ${route}: ${summary.replace(/"""/g, "'''")}${paged ? ' (the page: data and meta)' : ''}"""`,
  ];
  if (query.length) {
    lines.push(
      `        query = {${query.map((p) => `${JSON.stringify(p.name)}: ${snake(p.name)}`).join(', ')}}`,
    );
  }
  if (headers.length) {
    lines.push(
      `        headers = {${headers.map((p) => `${JSON.stringify(p.name)}: ${snake(p.name)}`).join(', ')}}`,
    );
  }
  const extra = [
    query.length ? ', query=query' : '',
    body,
    headers.length ? ', headers=headers' : '',
    enveloped && !paged ? '' : ', envelope=False',
  ].join('');
  lines.push(`        return self._request(${JSON.stringify(method.toUpperCase())}, f"${pathExpr}"${extra})`);
  return lines;
}

function successSchema(op) {
  const [, response] = Object.entries(op.responses ?? {}).find(([status]) => /^2/.test(status)) ?? [];
  return response?.content?.['application/json']?.schema;
}
