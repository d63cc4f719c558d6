import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * scripts/start.mjs (`npm start`) runs src/ compiled to JavaScript, and must never run a compiled copy that differs
 * from the sources. It runs here in a checkout of its own: the script, a tsconfig.json, a small src/ (an entry
 * that imports a module, reads an asset beside itself and prints its role) and node_modules with tsx.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

let checkout: string;
beforeAll(async () => {
  checkout = await mkdtemp(path.join(os.tmpdir(), 'wathiq-start-script-'));
  await mkdir(path.join(checkout, 'scripts'));
  await cp(path.join(ROOT, 'scripts', 'start.mjs'), path.join(checkout, 'scripts', 'start.mjs'));
  await cp(path.join(ROOT, 'tsconfig.json'), path.join(checkout, 'tsconfig.json'));
  await writeFile(path.join(checkout, 'package.json'), JSON.stringify({ type: 'module' }));
  // A node_modules of its own (the compiled copy goes under it), holding the one package the script needs.
  await mkdir(path.join(checkout, 'node_modules'));
  await symlink(path.join(ROOT, 'node_modules', 'tsx'), path.join(checkout, 'node_modules', 'tsx'), 'dir');
  await mkdir(path.join(checkout, 'src', 'public'), { recursive: true });
  await writeSource('main.ts', mainSource);
  await writeSource('greeting.ts', greeting('hello'));
  await writeSource('public/asset.txt', 'asset one');
});
afterAll(() => rm(checkout, { recursive: true, force: true }));

const mainSource = `import { readFileSync } from 'node:fs';
import { greeting } from './greeting.ts';
const asset = readFileSync(new URL('./public/asset.txt', import.meta.url), 'utf8');
const lazy = await import('./greeting.ts');
const role: string = process.argv[2] ?? 'all';
console.log(JSON.stringify({ greeting, lazy: lazy.greeting, asset, role, from: import.meta.url }));
`;
const greeting = (word: string) => `export const greeting: string = '${word}';\n`;

const writeSource = (file: string, content: string) => writeFile(path.join(checkout, 'src', file), content);

interface Output {
  greeting: string;
  lazy: string;
  asset: string;
  role: string;
  /** main's import.meta.url: the compiled copy, or src/main.ts under tsx. */
  from: string;
  stderr: string;
}

async function start(...args: string[]): Promise<Output> {
  const { stdout, stderr } = await run(process.execPath, ['scripts/start.mjs', ...args], { cwd: checkout });
  const line = stdout.trim().split('\n').at(-1)!;
  return { ...(JSON.parse(line) as Omit<Output, 'stderr'>), stderr };
}

/** main.js's folder holds the fingerprint of the sources it was compiled from. */
const fingerprintFile = (from: string) => path.join(path.dirname(new URL(from).pathname), '.fingerprint');

describe('scripts/start.mjs', () => {
  it('runs the sources compiled, passes the role on, and keeps the assets beside them', async () => {
    const out = await start('api');
    expect(out).toMatchObject({ greeting: 'hello', lazy: 'hello', asset: 'asset one', role: 'api' });
    expect(out.from).toMatch(/\/node_modules\/\.cache\/wathiq\/compiled-[0-9a-f]+\/main\.js$/);
    expect(out.stderr).toBe('');
  });

  it('compiles again only when a source changed, and never runs the old copy', async () => {
    const first = await start();
    const fingerprint = fingerprintFile(first.from);
    const compiledAt = (await stat(fingerprint)).mtimeMs;

    // Unchanged sources: the compiled copy is used as it is.
    const again = await start();
    expect(again.greeting).toBe('hello');
    expect((await stat(fingerprint)).mtimeMs).toBe(compiledAt);

    // A changed module, a changed asset, a new file: each is seen on the next start.
    await writeSource('greeting.ts', greeting('changed'));
    expect(await start()).toMatchObject({ greeting: 'changed', lazy: 'changed' });
    await writeSource('public/asset.txt', 'asset two');
    expect((await start()).asset).toBe('asset two');
    const before = await readFile(fingerprint, 'utf8');
    await writeSource('unused.ts', 'export const unused = 1;\n');
    await start();
    expect(await readFile(fingerprint, 'utf8')).not.toBe(before);

    // Back to the first content: compiled again, not left at the last copy.
    await writeSource('greeting.ts', greeting('hello'));
    expect((await start()).greeting).toBe('hello');
  });

  it('runs the sources under tsx when they cannot be compiled', async () => {
    // A file with a syntax error that the entry never imports: the compile fails, the sources still run.
    await writeSource('broken.ts', 'export const broken = ;\n');
    const fallback = await start();
    expect(fallback.stderr).toMatch(/Running src\/ under tsx: compiling it to .* failed/);
    expect(fallback.from).toMatch(/\/src\/main\.ts$/);
    expect(fallback.greeting).toBe('hello');

    await rm(path.join(checkout, 'src', 'broken.ts'));
    const fixed = await start();
    expect(fixed.from).toMatch(/compiled-[0-9a-f]+\/main\.js$/);
    expect(fixed.stderr).toBe('');
  });
});
