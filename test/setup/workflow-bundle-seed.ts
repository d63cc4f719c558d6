import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { copyIntoPlace } from './copy-into-place.ts';

/** What src/temporal/workflow-bundle-cache.ts keeps in a cache folder: the code first, then the manifest. */
const FILES = ['workflow-bundle.js', 'workflow-bundle.json'] as const;

/**
 * Copies the run's workflow bundle cache into `<dataDir>/cache`, where a worker process (src/main.ts) looks for one
 * before it bundles: every worker a test starts would otherwise run webpack over the workflow code again (seconds of
 * CPU each, on cores the other test files share). The worker still checks the manifest against every source file,
 * so a stale copy costs it a bundle, nothing else. Each file is copied whole and renamed into place
 * (copyIntoPlace), code first, as the cache itself writes them.
 */
export async function seedWorkflowBundle(cacheDir: string, dataDir: string): Promise<void> {
  if (!cacheDir) return;
  const target = path.join(dataDir, 'cache');
  await mkdir(target, { recursive: true });
  for (const name of FILES) await copyIntoPlace(path.join(cacheDir, name), path.join(target, name));
}
