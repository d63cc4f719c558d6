import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assignableRange, ephemeralRange, freePort } from './free-port.ts';

describe("the tests' free ports", () => {
  it('reads the kernel ephemeral range, and takes the IANA range when there is none to read or it makes no sense', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-ports-'));
    try {
      const file = path.join(dir, 'ip_local_port_range');
      await writeFile(file, '32768\t60999\n');
      expect(ephemeralRange(file)).toEqual([32768, 60999]);
      for (const nonsense of ['', 'a b', '60999 32768', '80 90', '__proto__'])
        expect(ephemeralRange((await writeFile(file, nonsense), file))).toEqual([49152, 65535]);
      expect(ephemeralRange(path.join(dir, 'missing'))).toEqual([49152, 65535]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('draws below the ephemeral range, above it when there is no room below, anywhere unprivileged as a last resort', () => {
    expect(assignableRange([32768, 60999])).toEqual([20000, 32767]);
    expect(assignableRange([49152, 65535])).toEqual([20000, 49151]);
    expect(assignableRange([1025, 40000])).toEqual([40001, 65535]);
    expect(assignableRange([15000, 65535])).toEqual([10000, 65535]);
  });

  it('hands out distinct ports outside the ephemeral range that a server can bind at once', async () => {
    const [low, high] = ephemeralRange();
    const ports = await Promise.all(Array.from({ length: 25 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port < low || port > high, `port ${port} in the ephemeral range ${low}–${high}`).toBe(true);
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
