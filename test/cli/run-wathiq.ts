import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface WathiqRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npx wathiq …` as an operator runs it: bin/wathiq.mjs in a child process, with only `env` as its settings. */
export function runWathiq(args: readonly string[], env: Record<string, string>): Promise<WathiqRun> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'wathiq.mjs'), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
