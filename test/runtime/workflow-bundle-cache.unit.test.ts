import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { cachedWorkflowBundle } from '../../src/temporal/workflow-bundle-cache.ts';

let dir: string;
beforeAll(async () => {
  // Inside the repository: the bundler resolves @temporalio/workflow from the workflow's folder up.
  dir = await mkdtemp(path.join(path.dirname(fileURLToPath(import.meta.url)), '.bundle-cache-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const logger = createLogger({ logLevel: 'error' });

/** Writes a source file dated a minute back, as files are when a start finds them (not written while bundling). */
async function write(file: string, text: string): Promise<void> {
  await writeFile(file, text);
  const past = new Date(Date.now() - 60_000);
  await utimes(file, past, past);
}

describe('cachedWorkflowBundle', () => {
  it('reuses the bundle while its sources are unchanged, and bundles again when a source it imports changes', async () => {
    const workflows = path.join(dir, 'workflows.ts');
    const greeting = path.join(dir, 'greeting.ts');
    const cache = path.join(dir, 'cache');
    await write(
      workflows,
      `import { greeting } from './greeting.ts';\nexport async function hello(): Promise<string> { return greeting; }\n`,
    );
    await write(greeting, `export const greeting = 'first-version-marker';\n`);
    const options = { workflowsPath: workflows, dir: cache, logger };

    const first = await cachedWorkflowBundle(options);
    expect(first.cached).toBe(false);
    expect(first.code).toContain('first-version-marker');

    const again = await cachedWorkflowBundle(options);
    expect(again).toEqual({ code: first.code, cached: true });

    // A change in an imported file, not the entry: the bundle is made again and holds the new source.
    await write(greeting, `export const greeting = 'second-version-marker';\n`);
    const changed = await cachedWorkflowBundle(options);
    expect(changed.cached).toBe(false);
    expect(changed.code).toContain('second-version-marker');
    expect(changed.code).not.toContain('first-version-marker');
    expect((await cachedWorkflowBundle(options)).cached).toBe(true);

    // Other bundler options (tracing's interceptor module) are another bundle.
    const interceptors = path.join(dir, 'interceptors.ts');
    await write(interceptors, `export const interceptors = () => ({});\n`);
    const traced = await cachedWorkflowBundle({ ...options, workflowInterceptorModules: [interceptors] });
    expect(traced.cached).toBe(false);
  }, 180_000);
});
