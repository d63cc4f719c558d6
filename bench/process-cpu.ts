/**
 * CPU time of one process and everything under it, read from /proc: what a benchmark charges to one part of the
 * service. Processes are found by their parent, never by name alone, so the PostgreSQL backends and Temporal servers
 * of anything else running on the machine (another benchmark, a test run) are not counted.
 */
import { readdir, readFile } from 'node:fs/promises';

/** USER_HZ on Linux: the clock ticks /proc counts CPU time in. */
export const HZ = 100;

/** What a benchmark reads of one `/proc/<pid>/stat` (or `/proc/<pid>/task/<tid>/stat`) line. */
export interface ProcStat {
  /** The process's or thread's name, as the kernel keeps it (15 characters at most). */
  comm: string;
  ppid: number;
  /** utime + stime: its own clock ticks. */
  own: number;
  /** cutime + cstime: the ticks of the children it has waited for after they exited. */
  waited: number;
}

/** Parses one stat line; the name may hold spaces and parentheses, so the fields are counted from its last ")". */
export function parseProcStat(text: string): ProcStat {
  const close = text.lastIndexOf(')');
  // After "pid (comm) ": state is field 0 here, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
  const f = text.slice(close + 2).split(' ');
  return {
    comm: text.slice(text.indexOf('(') + 1, close),
    ppid: Number(f[1]),
    own: Number(f[11]) + Number(f[12]),
    waited: Number(f[13]) + Number(f[14]),
  };
}

/** A process's stat line parsed, or undefined once it has exited. */
export async function readProcStat(path: string): Promise<ProcStat | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseProcStat(text);
}

interface Stat {
  ppid: number;
  /** utime + stime, and cutime + cstime: its own ticks and those of the children it has waited for. */
  ticks: number;
}

async function stat(pid: number): Promise<Stat | undefined> {
  const s = await readProcStat(`/proc/${pid}/stat`);
  return s && { ppid: s.ppid, ticks: s.own + s.waited };
}

/** Every process id now under /proc. */
export async function allPids(): Promise<number[]> {
  return (await readdir('/proc')).filter((e) => /^\d+$/.test(e)).map(Number);
}

/** The first process whose command line (arguments joined by spaces) matches. */
export async function findProcess(pattern: RegExp): Promise<number | undefined> {
  for (const pid of await allPids()) {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (pattern.test(cmd.replace(/\0/g, ' '))) return pid;
  }
  return undefined;
}

/**
 * Core-seconds used so far by `root` and its descendants, those still running and those it (or they) waited for
 * after they exited: PostgreSQL's backends come and go with the pools, and their time stays in the postmaster's.
 */
export async function treeCoreSeconds(root: number): Promise<number> {
  const stats = new Map<number, Stat>();
  await Promise.all(
    (await allPids()).map(async (pid) => {
      const s = await stat(pid);
      if (s) stats.set(pid, s);
    }),
  );
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  let ticks = 0;
  const todo = stats.has(root) ? [root] : [];
  while (todo.length) {
    const pid = todo.pop()!;
    ticks += stats.get(pid)!.ticks;
    todo.push(...(children.get(pid) ?? []));
  }
  return ticks / HZ;
}

/**
 * Resolves once `pid` (and its descendants) used under `share` of one core over `windowMs`: work a process starts
 * in the background after it answers (the API compresses its page assets) is then not charged to what is measured
 * next. Gives up after `maxMs` and says how busy it still was.
 */
export async function untilQuiet(
  pid: number,
  options: { share?: number; windowMs?: number; maxMs?: number } = {},
): Promise<{ waitedMs: number; share: number }> {
  const { share = 0.05, windowMs = 1000, maxMs = 120_000 } = options;
  const started = performance.now();
  let last = await treeCoreSeconds(pid);
  for (;;) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = await treeCoreSeconds(pid);
    const used = (now - last) / (windowMs / 1000);
    last = now;
    const waitedMs = performance.now() - started;
    if (used <= share || waitedMs >= maxMs) return { waitedMs, share: used };
  }
}

/** Each figure's growth from `a` to `b`, divided by `units` (a per-document or per-request figure). */
export function perUnit<T extends { [K in keyof T]: number }>(a: T, b: T, units: number): T {
  return perUnitOver([[a, b]], units);
}

/** Each figure's growth over several spans (each from its first reading to its second), summed, divided by `units`. */
export function perUnitOver<T extends { [K in keyof T]: number }>(
  spans: readonly [T, T][],
  units: number,
): T {
  const keys = Object.keys(spans[0]![0]) as (keyof T)[];
  return Object.fromEntries(
    keys.map((k) => [k, spans.reduce((sum, [a, b]) => sum + (b[k] - a[k]), 0) / units]),
  ) as T;
}
