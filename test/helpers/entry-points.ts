import path from 'node:path';

/**
 * `npm run cli` (`node bin/wathiq.mjs`), for tests that run the operator's CLI as a process: it runs src/ compiled
 * once per change of the sources (scripts/start.mjs) instead of passing every module it loads through tsx's loader
 * at each run, about half the CPU of `node --import tsx src/cli.ts`.
 */
export const CLI_SCRIPT = path.resolve(import.meta.dirname, '../../bin/wathiq.mjs');
