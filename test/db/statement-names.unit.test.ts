import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { named } from '../../src/db/prepared.ts';

const SRC = join(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every statement name in the code: `named('…')` calls and the literal names `preparedRows` takes. */
function statementNames(): string[] {
  return sources(SRC).flatMap((path) => {
    const text = readFileSync(path, 'utf8');
    return [
      ...[...text.matchAll(/\bnamed\('([^']+)'\)/g)].map((m) => named(m[1]!).name),
      ...[...text.matchAll(/preparedRows<[^>]*>\(\s*db,\s*'([^']+)'/g)].map((m) => m[1]!),
    ];
  });
}

describe('prepared statement names', () => {
  it('are prefixed wathiq_ and each names a single call site, so no name stands for two texts', () => {
    const names = statementNames();
    expect(names).toContain('wathiq_approvers_of_document');
    expect(names).toContain('wathiq_document_with_approvers');
    for (const name of names) expect(name).toMatch(/^wathiq_[a-z_]+$/);
    const repeated = names.filter((name, i) => names.indexOf(name) !== i);
    expect(repeated).toEqual([]);
  });
});
