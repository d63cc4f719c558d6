/**
 * CPU time of one Node process by kind of thread, read from /proc/<pid>/task/<tid>/stat: where the worker's and the
 * API's time goes, below the noise of the per-process totals (a figure per thread kind moves with the code that
 * runs there, not with the neighbours).
 */
import { readdir } from 'node:fs/promises';
import { PDF_THREAD_NAME } from '../src/pdf/workers/thread-name.ts';
import { HZ, readProcStat } from './process-cpu.ts';

/** Core-seconds by kind of thread. */
export interface ThreadCpu {
  /** The JavaScript main thread (the thread whose id is the process's). */
  main: number;
  /** The PDF threads (composing final PDFs in the worker, checking uploads in the API), named PDF_THREAD_NAME. */
  pdf: number;
  /** The other Node worker threads: in the worker, the Temporal SDK's workflow thread. */
  workers: number;
  /** V8's platform threads: parallel and concurrent GC, concurrent compilation, for every isolate. */
  v8: number;
  /**
   * Everything else: libuv's pool, Temporal's core (tokio), the inspector, and threads that exited (their time
   * stays in the process's total, not in any task).
   */
  other: number;
}

export const THREAD_KINDS = ['main', 'pdf', 'workers', 'v8', 'other'] as const;

/** The kind of a thread, from its id and name (Node names its threads; V8's are "V8Worker"). */
export function threadKind(pid: number, tid: number, comm: string): keyof ThreadCpu {
  if (tid === pid) return 'main';
  if (comm === PDF_THREAD_NAME) return 'pdf';
  if (comm.startsWith('WorkerThread')) return 'workers';
  if (comm.startsWith('V8Worker') || comm.startsWith('V8 DefaultWorke')) return 'v8';
  return 'other';
}

/** Core-seconds used so far by `pid`'s threads, by kind (its own time: children's not included). */
export async function threadCoreSeconds(pid: number): Promise<ThreadCpu> {
  const out: ThreadCpu = { main: 0, pdf: 0, workers: 0, v8: 0, other: 0 };
  const total = await readProcStat(`/proc/${pid}/stat`);
  if (total === undefined) return out;
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  let live = 0;
  for (const tid of tids) {
    const thread = await readProcStat(`/proc/${pid}/task/${tid}/stat`);
    if (thread === undefined) continue; // exited since the listing: its time is in the total
    out[threadKind(pid, Number(tid), thread.comm)] += thread.own / HZ;
    live += thread.own / HZ;
  }
  out.other += Math.max(0, total.own / HZ - live);
  return out;
}

/** "main 0.0412, PDF threads 0.0170, other worker threads 0.0131, V8 platform 0.0190, other 0.0040" */
export const formatThreadCpu = (c: ThreadCpu): string =>
  `main ${c.main.toFixed(4)}, PDF threads ${c.pdf.toFixed(4)}, other worker threads ${c.workers.toFixed(4)}, V8 platform ${c.v8.toFixed(4)}, other ${c.other.toFixed(4)}`;
