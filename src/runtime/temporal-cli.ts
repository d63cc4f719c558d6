import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../logger.ts';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** Where a Temporal CLI built by Wathiq is kept: outside any clone, shared by every checkout and CI run. */
export function cliCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'wathiq', 'bin');
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function goBinDir(): string | undefined {
  if (!onPath('go')) return undefined;
  const out = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  return out.status === 0 && out.stdout.trim()
    ? path.join(out.stdout.trim().split(path.delimiter)[0]!, 'bin')
    : undefined;
}

/** Finds a Temporal CLI without building one: TEMPORAL_CLI_PATH, PATH, our cache, then Go's bin folder. */
export function findTemporalCli(explicit?: string): string | undefined {
  if (explicit) {
    if (!existsSync(explicit))
      throw new Error(`TEMPORAL_CLI_PATH points to ${explicit}, which does not exist`);
    return explicit;
  }
  const found = [onPath('temporal'), path.join(cliCacheDir(), 'temporal')].find(
    (c): c is string => !!c && existsSync(c),
  );
  if (found) return found;
  // Asked only when the cheaper places miss: `go env` blocks this process while it runs (each start otherwise).
  const goBin = goBinDir();
  const inGoBin = goBin && path.join(goBin, 'temporal');
  return inGoBin && existsSync(inGoBin) ? inGoBin : undefined;
}

/** Builds the CLI with `go install` into the cache (a few minutes, once per machine). */
export async function buildTemporalCli(logger: Logger): Promise<string> {
  if (!onPath('go')) throw new Error('Go is not installed, so the Temporal CLI cannot be built');
  const dir = cliCacheDir();
  await mkdir(dir, { recursive: true });
  logger.info(
    { module: TEMPORAL_CLI_MODULE, into: dir },
    'building the Temporal CLI with go install (first run only)',
  );
  await new Promise<void>((resolve, reject) => {
    execFile(
      'go',
      ['install', TEMPORAL_CLI_MODULE],
      { env: { ...process.env, GOBIN: dir }, maxBuffer: 64 * 1024 * 1024 },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`go install failed: ${stderr || err.message}`)) : resolve(),
    );
  });
  return path.join(dir, 'temporal');
}

/** Finds the CLI, or builds it when Go is present; undefined when neither works. */
export async function locateOrBuildTemporalCli(
  explicit: string | undefined,
  logger: Logger,
): Promise<string | undefined> {
  const found = findTemporalCli(explicit);
  if (found) return found;
  if (onPath('go')) return buildTemporalCli(logger);
  return undefined;
}
