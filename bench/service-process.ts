/**
 * One role of Wathiq in a process of its own, started as `npm run start:api` / `start:worker` start it (the sources
 * compiled to JavaScript, not under tsx, whose hooks also load into every PDF thread), so a benchmark reads its CPU
 * time apart from its own driver's.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { gcTrace, type GcTrace } from './gc-trace.ts';

export interface ServiceProcess {
  pid: number;
  /** Its GC pauses, when started with `traceGc`. */
  gc?: GcTrace;
  /** SIGTERM (the role's ordered shutdown, which writes a CPU profile when asked for one), then its exit. */
  stop(): Promise<void>;
}

/**
 * Starts the role with `env` added to this process's environment and resolves once it prints its banner.
 * `cpuProfileDir` writes a V8 CPU profile of it there when it exits; `traceGc` records its GC pauses (a line on
 * its stdout each).
 */
export async function startServiceProcess(
  role: 'api' | 'worker',
  env: Record<string, string>,
  cpuProfileDir?: string,
  { traceGc = false } = {},
): Promise<ServiceProcess> {
  const profile = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [];
  const child: ChildProcessByStdio<null, Readable, null> = spawn(
    process.execPath,
    [
      ...profile,
      ...(traceGc ? ['--trace-gc'] : []),
      ...(process.env[`BENCH_${role.toUpperCase()}_NODE_FLAGS`]?.split(' ').filter(Boolean) ?? []),
      'scripts/start.mjs',
      role,
    ],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  process.once('exit', () => child.kill('SIGKILL')); // never left behind
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let banner = '';
    child.stdout.on('data', (d: Buffer) => {
      banner += d.toString();
      if (banner.includes('Wathiq is running')) resolve();
    });
    void exited.then((code) => reject(new Error(`the ${role} exited with ${code} before it ran`)));
  });
  child.stdout.removeAllListeners('data');
  // Its later output is read only for GC lines, and read either way: it must not fill the pipe.
  const gc = traceGc ? gcTrace(child.stdout) : (child.stdout.resume(), undefined);
  return {
    pid: child.pid!,
    gc,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
