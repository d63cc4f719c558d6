import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import {
  acceptsSockets,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../../src/runtime/embedded-postgres.ts';
import { freePort } from '../setup/free-port.ts';

describe.skipIf(process.platform === 'win32')('the embedded PostgreSQL over its Unix socket', () => {
  let dir: string;
  let server: EmbeddedPostgresHandle;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-pg-socket-'));
    await chmod(dir, 0o755);
    server = await startEmbeddedPostgres({
      dir: path.join(dir, 'pg', 'data'),
      port: await freePort(),
      logger: createLogger({ logLevel: 'silent' }),
      database: 'wathiq',
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const serverAddress = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ addr: string | null; db: string }>(
        'SELECT inet_server_addr() AS addr, current_database() AS db',
      );
      return rows[0];
    } finally {
      await client.end();
    }
  };

  it('answers on the socket through localUrl and on 127.0.0.1 through url, in the same database', async () => {
    // inet_server_addr() is NULL on a Unix-socket connection.
    expect(await serverAddress(server.localUrl('wathiq'))).toEqual({ addr: null, db: 'wathiq' });
    expect(await serverAddress(server.url('wathiq'))).toEqual({ addr: '127.0.0.1', db: 'wathiq' });
    expect(server.localUrl('wathiq')).toContain(encodeURIComponent(path.join(dir, 'pg')));
  });
});

describe.skipIf(process.platform === 'win32')('acceptsSockets', () => {
  it('makes and removes a probe socket in a folder that holds one, over a stale one, and says no for one that does not exist', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-probe-'));
    try {
      expect(await acceptsSockets(dir, 5433)).toBe(true);
      expect(await readdir(dir)).toEqual([]);
      expect(await acceptsSockets(path.join(dir, 'missing'), 5433)).toBe(false);
      // A probe left behind by a process killed mid-probe does not keep the server on TCP for good.
      await writeFile(path.join(dir, '.s.probe.5433'), '');
      expect(await acceptsSockets(dir, 5433)).toBe(true);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
