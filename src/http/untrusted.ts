/**
 * Parsed untrusted data (a JSON body, a query object) copied so that no object in it has a prototype: a key the
 * client chose (`constructor`, `toString`, `__proto__`) is then only ever an own property, never an inherited
 * one, whatever later code does with it (lookups, `in`, merging, spreading). Arrays stay arrays; values that are
 * neither arrays nor plain objects are kept as they are. Iterative, so deep nesting cannot exhaust the stack.
 */
export function withoutPrototypes(value: unknown): unknown {
  if (!isContainer(value)) return value;
  const root = emptyLike(value);
  const pending: [Record<string, unknown>, Record<string, unknown>][] = [
    [value as Record<string, unknown>, root],
  ];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [source, target] = next;
    for (const key of Object.keys(source)) {
      const item = source[key];
      if (isContainer(item)) {
        const copy = emptyLike(item);
        target[key] = copy; // an array, or an object without a prototype: no `__proto__` setter to reach
        pending.push([item as Record<string, unknown>, copy]);
      } else {
        target[key] = item;
      }
    }
  }
  return root;
}

function isContainer(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function emptyLike(value: object): Record<string, unknown> {
  return (Array.isArray(value) ? [] : Object.create(null)) as Record<string, unknown>;
}
