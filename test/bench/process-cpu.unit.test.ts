import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  findProcess,
  parseProcStat,
  perUnit,
  perUnitOver,
  readProcStat,
  treeCoreSeconds,
  untilQuiet,
} from '../../bench/process-cpu.ts';

/** A child that spins until it has used `ms` of CPU (however long a busy machine makes that), then exits. */
function spinner(ms: number, marker: string) {
  const child = spawn(process.execPath, [
    '-e',
    `const spent = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
     const start = spent(); while (spent() - start < ${ms}); // ${marker}`,
  ]);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited };
}

describe('treeCoreSeconds', () => {
  it("counts a child's CPU while it runs and after it has exited and been waited for", async () => {
    const before = await treeCoreSeconds(process.pid);
    const { exited } = spinner(400, 'counted');
    await exited;
    // Reaped by this process: its time is in this process's cutime + cstime now.
    const after = await treeCoreSeconds(process.pid);
    expect(after - before).toBeGreaterThanOrEqual(0.4);
  });

  it("leaves out processes that are not the root's descendants", async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000) // not-ours'], {
      detached: true,
    });
    try {
      const pid = other.pid!;
      // The child's tree is the child alone: this process (its parent) is not in it.
      const mine = await treeCoreSeconds(process.pid);
      expect(await treeCoreSeconds(pid)).toBeLessThan(mine);
      expect(await findProcess(/setTimeout\(\(\) => \{\}, 10000\) \/\/ not-ours/)).toBe(pid);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('is 0 for a process that does not exist', async () => {
    expect(await treeCoreSeconds(2 ** 22 + 1)).toBe(0);
  });
});

describe('untilQuiet', () => {
  it('waits while a child is busy and resolves once it is quiet', async () => {
    const { child, exited } = spinner(1000, 'busy');
    const quiet = await untilQuiet(child.pid!, { windowMs: 300, share: 0.05, maxMs: 60_000 });
    await exited;
    // It cannot be quiet before the child has spun its second of CPU.
    expect(quiet.waitedMs).toBeGreaterThanOrEqual(1000);
    expect(quiet.share).toBeLessThanOrEqual(0.05);
  });
});

describe('parseProcStat', () => {
  it('counts the fields from the last ")" of the name, which may hold spaces and parentheses', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
    const line = '4242 (a (b) c) S 17 4242 4242 0 -1 4194560 10 0 0 0 250 50 7 3 20 0 1 0';
    expect(parseProcStat(line)).toEqual({ comm: 'a (b) c', ppid: 17, own: 300, waited: 10 });
  });

  it("reads this process's own line, and nothing for a process that is gone", async () => {
    const own = await readProcStat(`/proc/${process.pid}/stat`);
    expect(own?.ppid).toBe(process.ppid);
    expect(own!.own).toBeGreaterThan(0);
    expect(await readProcStat('/proc/0/stat')).toBeUndefined();
  });
});

describe('perUnitOver', () => {
  it('sums each figure over its spans before dividing, and one span is perUnit', () => {
    const a = { api: 1, worker: 10 };
    const b = { api: 3, worker: 16 };
    const c = { api: 10, worker: 100 };
    const d = { api: 14, worker: 102 };
    // (3 - 1) + (14 - 10) = 6 and (16 - 10) + (102 - 100) = 8, over 4 units.
    expect(
      perUnitOver(
        [
          [a, b],
          [c, d],
        ],
        4,
      ),
    ).toEqual({ api: 1.5, worker: 2 });
    expect(perUnitOver([[a, b]], 2)).toEqual(perUnit(a, b, 2));
  });
});
