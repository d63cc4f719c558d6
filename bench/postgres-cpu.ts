/**
 * CPU time of an embedded PostgreSQL server by kind of process, from /proc: its client backends (one per pooled
 * connection), its background processes (WAL writer, checkpointer, background writer, autovacuum, …), the
 * postmaster itself, and the processes that exited (backends of closed connections, autovacuum workers: their
 * time moves to the postmaster's cutime and cstime once it has waited for them).
 */
import { readdir, readFile } from 'node:fs/promises';

/** USER_HZ on Linux: the clock ticks /proc counts CPU time in. */
const HZ = 100;

export interface PostgresCpu {
  backends: number;
  background: number;
  postmaster: number;
  exited: number;
}

/** Its own time (utime + stime) and that of the children it has waited for (cutime + cstime). */
async function ticks(pid: number): Promise<{ ppid: number; own: number; waited: number } | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), waited: Number(f[13]) + Number(f[14]) };
}

/** Core-seconds used so far by the server whose postmaster is `postmaster`, by kind of process. */
export async function postgresCoreSeconds(postmaster: number): Promise<PostgresCpu> {
  const out: PostgresCpu = { backends: 0, background: 0, postmaster: 0, exited: 0 };
  const root = await ticks(postmaster);
  if (!root) return out;
  out.postmaster = root.own / HZ;
  out.exited = root.waited / HZ;
  const pids = (await readdir('/proc')).filter((e) => /^\d+$/.test(e)).map(Number);
  await Promise.all(
    pids.map(async (pid) => {
      const t = await ticks(pid);
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
