import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { freePort } from '../setup/free-port.ts';
import { outputTail } from './processes.ts';

/**
 * `npm start` as a developer runs it, for tests: no DATABASE_URL or TEMPORAL_ADDRESS, so it starts an embedded
 * PostgreSQL and a Temporal dev server with their data in the given DATA_DIR, on free ports of its own.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** package.json's start script, as argv: `node --import tsx src/main.ts`, run without npm in between. */
async function startCommand(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const argv = pkg.scripts.start!.split(' ');
  expect(argv[0], 'the start script runs node').toBe('node');
  return [process.execPath, ...argv.slice(1)];
}

/** Starts it without waiting. `env` holds the variables it ran with, for a command run beside it. */
export async function launch(dataDir: string) {
  const port = await freePort();
  const temporalPort = await freePort();
  const [command, ...args] = await startCommand();
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://localhost:${port}`,
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    TEMPORAL_DEV_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(await freePort()),
    METRICS_PORT: 'off',
    DATABASE_URL: '',
    TEMPORAL_ADDRESS: '',
  };
  const child = spawn(command!, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, exited, output: () => out, port, temporalAddress: `127.0.0.1:${temporalPort}`, env };
}

/** Starts it and waits until everything is up (its `startup timings` line follows the banner). */
export async function npmStart(dataDir: string) {
  const app = await launch(dataDir);
  const deadline = Date.now() + 240_000;
  while (!app.output().includes('"startup timings"') && app.child.exitCode === null && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  if (!app.output().includes('"startup timings"')) {
    app.child.kill('SIGKILL');
    throw new Error(`npm start did not come up:\n${outputTail(app.output())}`);
  }
  return app;
}
