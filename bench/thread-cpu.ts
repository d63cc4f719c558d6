/**
 * CPU time of one Node process by kind of thread, read from /proc/<pid>/task/<tid>/stat: where the worker's and the
 * API's time goes, below the noise of the per-process totals (a figure per thread kind moves with the code that
 * runs there, not with the neighbours).
 */
import { readdir, readFile } from 'node:fs/promises';

/** USER_HZ on Linux: the clock ticks /proc counts CPU time in. */
const HZ = 100;

/** Core-seconds by kind of thread. */
export interface ThreadCpu {
  /** The JavaScript main thread (the thread whose id is the process's). */
  main: number;
  /** Node worker threads: the workflow thread, the PDF threads, the upload checks. */
  workers: number;
  /** V8's platform threads: parallel and concurrent GC, concurrent compilation, for every isolate. */
  v8: number;
  /**
   * Everything else: libuv's pool, Temporal's core (tokio), the inspector, and threads that exited (their time
   * stays in the process's total, not in any task).
   */
  other: number;
}

export const THREAD_KINDS = ['main', 'workers', 'v8', 'other'] as const;

/** utime + stime and the thread's name, from one stat line. */
function parseStat(text: string): { comm: string; ticks: number } {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  // After "pid (comm) ": state is field 0 here, utime 11, stime 12.
  const f = text.slice(close + 2).split(' ');
  return { comm: text.slice(open + 1, close), ticks: Number(f[11]) + Number(f[12]) };
}

/** The kind of a thread, from its id and name (Node names its threads; V8's are "V8Worker"). */
export function threadKind(pid: number, tid: number, comm: string): keyof ThreadCpu {
  if (tid === pid) return 'main';
  if (comm.startsWith('WorkerThread')) return 'workers';
  if (comm.startsWith('V8Worker') || comm.startsWith('V8 DefaultWorke')) return 'v8';
  return 'other';
}

/** Core-seconds used so far by `pid`'s threads, by kind (its own time: children's not included). */
export async function threadCoreSeconds(pid: number): Promise<ThreadCpu> {
  const out: ThreadCpu = { main: 0, workers: 0, v8: 0, other: 0 };
  const total = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (total === undefined) return out;
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  let live = 0;
  for (const tid of tids) {
    const text = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => undefined);
    if (text === undefined) continue; // exited since the listing: its time is in the total
    const { comm, ticks } = parseStat(text);
    out[threadKind(pid, Number(tid), comm)] += ticks / HZ;
    live += ticks / HZ;
  }
  out.other += Math.max(0, parseStat(total).ticks / HZ - live);
  return out;
}

/** "main 0.0412, worker threads 0.0301, V8 platform 0.0190, other 0.0040" */
export const formatThreadCpu = (c: ThreadCpu): string =>
  `main ${c.main.toFixed(4)}, worker threads ${c.workers.toFixed(4)}, V8 platform ${c.v8.toFixed(4)}, other ${c.other.toFixed(4)}`;
