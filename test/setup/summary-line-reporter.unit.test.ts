import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPORTER = path.resolve(import.meta.dirname, 'summary-line-reporter.ts');
const MODULES = path.resolve(import.meta.dirname, '../../node_modules');
const VITEST = path.join(MODULES, 'vitest/vitest.mjs');

/** Files of a small project of their own, run by a real vitest with our reporter. */
const FIXTURES: Record<string, string> = {
  'passes.test.ts': `import { it, expect } from 'vitest';\nit('passes', () => expect(1).toBe(1));\n`,
  'fails.test.ts': `import { it, expect } from 'vitest';\nit('fails', () => expect(1).toBe(2));\nit('passes too', () => {});\n`,
  'hook-throws.test.ts': `import { beforeAll, it } from 'vitest';\nbeforeAll(() => { throw new Error('no server'); });\nit('a', () => {});\nit('b', () => {});\n`,
  'does-not-load.test.ts': `throw new Error('broken import');\n`,
  'skips.test.ts': `import { it } from 'vitest';\nit.skip('later', () => {});\n`,
};

describe('the closing line of a test run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-reporter-'));
    for (const [name, text] of Object.entries(FIXTURES)) await writeFile(path.join(dir, name), text);
    // The fixtures import vitest from this checkout; the config names only our reporter.
    await symlink(MODULES, path.join(dir, 'node_modules'));
    await writeFile(
      path.join(dir, 'vitest.config.mjs'),
      `export default { test: { reporters: [${JSON.stringify(REPORTER)}] } };\n`,
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const vitest = async (...files: string[]) => {
    const args = [VITEST, 'run', '--root', dir, ...files];
    try {
      const { stdout } = await run(process.execPath, args, { cwd: dir });
      return { code: 0, stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, stdout: e.stdout };
    }
  };

  it('counts a file that did not load and a beforeAll that threw as failures, never 0 failed on a failed run', async () => {
    const all = await vitest();
    expect(all.code).not.toBe(0);
    // passes: 1; fails: 1 failed, 1 passed; hook-throws: its 2 tests skipped, 1 failure; does-not-load: 1 failure.
    expect(all.stdout).toMatch(/^tests: 2 passed, 3 failed, 3 skipped$/m);

    const hookOnly = await vitest('hook-throws.test.ts');
    expect(hookOnly.code).not.toBe(0);
    expect(hookOnly.stdout).toMatch(/^tests: 0 passed, 1 failed, 2 skipped$/m);
  }, 60_000);

  it('reads 0 failed on a run that passed', async () => {
    const green = await vitest('passes.test.ts', 'skips.test.ts');
    expect(green.code).toBe(0);
    expect(green.stdout).toMatch(/^tests: 1 passed, 0 failed, 1 skipped$/m);
  }, 60_000);
});
