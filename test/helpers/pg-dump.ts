import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A pg_dump that can dump the embedded PostgreSQL: scripts/ensure-pg-dump.sh finds one or unpacks PostgreSQL's
 * client programs once into ~/.cache/wathiq (a pg_dump refuses a server newer than itself, and Debian's is older).
 */
export async function locatePgDump(): Promise<string> {
  const script = path.resolve(import.meta.dirname, '../../scripts/ensure-pg-dump.sh');
  const { stdout } = await run('bash', [script], { timeout: 300_000 });
  return stdout.trim();
}

/** Every table of the database, schema and rows, as pg_dump writes it (plain SQL). */
export async function dumpDatabase(url: string): Promise<string> {
  const pgDump = await locatePgDump();
  const { stdout } = await run(pgDump, ['--no-owner', '--no-privileges', '--dbname', url], {
    maxBuffer: 512 * 1024 * 1024,
    timeout: 120_000,
  });
  return stdout;
}
