/**
 * CPU time of an embedded PostgreSQL server by kind of process, from /proc: its client backends (one per pooled
 * connection), its background processes (WAL writer, checkpointer, background writer, autovacuum, …), the
 * postmaster itself, and the processes that exited (backends of closed connections, autovacuum workers: their
 * time moves to the postmaster's cutime and cstime once it has waited for them).
 */
import { readFile } from 'node:fs/promises';
import { allPids, HZ, readProcStat } from './process-cpu.ts';

export interface PostgresCpu {
  backends: number;
  background: number;
  postmaster: number;
  exited: number;
}

/** Core-seconds used so far by the server whose postmaster is `postmaster`, by kind of process. */
export async function postgresCoreSeconds(postmaster: number): Promise<PostgresCpu> {
  const out: PostgresCpu = { backends: 0, background: 0, postmaster: 0, exited: 0 };
  const root = await readProcStat(`/proc/${postmaster}/stat`);
  if (!root) return out;
  out.postmaster = root.own / HZ;
  out.exited = root.waited / HZ;
  const pids = await allPids();
  await Promise.all(
    pids.map(async (pid) => {
      const t = await readProcStat(`/proc/${pid}/stat`);
      if (t?.ppid !== postmaster) return;
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      // A client backend's title is "postgres: <user> <database> <client> <state>"; the others name their job.
      const backend = /^postgres: \S+ \S+ (\[local\]|\d[\d.:]*\(\d+\)|\S+\(\d+\))/.test(
        cmd.replace(/\0/g, ' '),
      );
      out[backend ? 'backends' : 'background'] += (t.own + t.waited) / HZ;
    }),
  );
  return out;
}

export const formatPostgresCpu = (c: PostgresCpu): string =>
  `client backends ${c.backends.toFixed(4)}, background processes ${c.background.toFixed(4)}, postmaster ${c.postmaster.toFixed(4)}, exited processes ${c.exited.toFixed(4)}`;
