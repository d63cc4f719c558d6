import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The worker's build id (its Worker Deployment Version), made from the workflow code alone: every file of ours the
 * workflow bundle's entry imports for its values, followed import by import, each named by its path relative to
 * the entry's folder and hashed with its content (line endings normalised), and the version of each package they
 * import plus the bundler's. So two checkouts of the same commit, in any folder on any machine, give the same id,
 * a change anywhere else in the service (the API, the activities, the config) keeps it, and any change to what the
 * workflows run makes a new one. Type-only imports are not followed: the bundler drops them.
 *
 * The compiled entry (dist/workflows/index.js) gives another id than its sources (other bytes, same behaviour):
 * every worker of one deployment runs the same kind of build.
 */
export async function workflowBuildId(workflowsPath: string): Promise<string> {
  const root = path.dirname(path.resolve(workflowsPath));
  const files = new Map<string, string>();
  const packages = new Set<string>([packageVersion('@temporalio/worker', root)]);
  const pending = [path.resolve(workflowsPath)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    const source = (await readFile(file, 'utf8')).replace(/\r\n/g, '\n');
    files.set(file, sha256(source));
    for (const specifier of valueImports(source)) {
      if (specifier.startsWith('.')) pending.push(resolveRelative(file, specifier));
      else packages.add(packageVersion(packageName(specifier), path.dirname(file)));
    }
  }
  const lines = [
    ...[...files].map(([file, hash]) => `${path.relative(root, file).split(path.sep).join('/')} ${hash}`),
    ...packages,
  ].sort();
  return `wf-${sha256(lines.join('\n')).slice(0, 20)}`;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The modules `source` imports or re-exports for their values (not `import type`, not only `type` names). */
export function valueImports(source: string): string[] {
  const found: string[] = [];
  const statement = /(?:^|[\n;])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const m of source.matchAll(statement)) {
    if (m[2]) continue;
    const names = /^\{([^}]*)\}$/.exec(m[3]!.trim());
    const specifiers = names?.[1]
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (specifiers && specifiers.length > 0 && specifiers.every((s) => s.startsWith('type '))) continue;
    found.push(m[4]!);
  }
  for (const m of source.matchAll(/(?:^|[\n;])\s*import\s*['"]([^'"]+)['"]/g)) found.push(m[1]!);
  return found;
}

/** A relative import as the bundler resolves it: the file named, or its .ts source for a `.js` name. */
function resolveRelative(from: string, specifier: string): string {
  const file = path.resolve(path.dirname(from), specifier);
  if (existsSync(file)) return file;
  const ts = file.replace(/\.js$/, '.ts');
  if (existsSync(ts)) return ts;
  throw new Error(`workflow build id: ${specifier}, imported by ${from}, is not there`);
}

const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

function packageVersion(name: string, fromDir: string): string {
  const require = createRequire(path.join(fromDir, 'index.js'));
  const { version } = require(`${name}/package.json`) as { version: string };
  return `${name}@${version}`;
}
