import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { startEmbeddedPostgres, startFailure } from '../../src/runtime/embedded-postgres.ts';
import { freePort } from '../setup/free-port.ts';

describe('a start of the embedded PostgreSQL that fails', () => {
  it('says what the server said when its port is taken, and which setting moves it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-pg-taken-'));
    await chmod(dir, 0o755);
    const port = await freePort();
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const started = startEmbeddedPostgres({
        dir: path.join(dir, 'pg', 'data'),
        port,
        logger: createLogger({ logLevel: 'silent' }),
      });
      const error = await started.then(
        async (server) => {
          await server.stop();
          throw new Error('started on a port another process holds');
        },
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(Error);
      const message = (error as Error).message;
      expect(message).toContain(`did not start on port ${port}`);
      expect(message).toMatch(
        /PostgreSQL said:\n.*could not bind IPv4 address "127\.0\.0\.1": Address already in use/,
      );
      expect(message).toContain('set EMBEDDED_POSTGRES_PORT to a free one');
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('keeps the lines that say why, else the last ones, and names no port setting for another cause', () => {
    const output = [
      '2026-12-06 00:00:00.000 UTC [1] LOG:  starting PostgreSQL 17',
      '2026-12-06 00:00:00.001 UTC [1] FATAL:  data directory "/x" has invalid permissions',
      '2026-12-06 00:00:00.001 UTC [1] DETAIL:  Permissions should be u=rwx (0700) or u=rwx,g=rx (0750).',
      '2026-12-06 00:00:00.002 UTC [1] LOG:  database system is shut down',
    ];
    const message = startFailure(5432, undefined, output);
    expect(message).toBe(
      [
        'Embedded PostgreSQL did not start on port 5432: the server exited',
        'PostgreSQL said:',
        output[1],
        output[2],
      ].join('\n'),
    );
    const quiet = ['one', 'two', 'three', 'four', 'five', 'six'];
    expect(startFailure(5432, undefined, quiet)).toBe(
      'Embedded PostgreSQL did not start on port 5432: the server exited\nPostgreSQL said:\ntwo\nthree\nfour\nfive\nsix',
    );
    expect(startFailure(5432, undefined, [])).toBe(
      'Embedded PostgreSQL did not start on port 5432: the server exited and wrote nothing',
    );
    expect(startFailure(5432, new Error('spawn EACCES'), [])).toBe(
      'Embedded PostgreSQL did not start on port 5432: spawn EACCES',
    );
  });
});
