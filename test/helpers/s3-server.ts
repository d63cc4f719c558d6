import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from '../setup/free-port.ts';

export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

const PYTHON = process.env.PYTHON ?? 'python3';

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A real S3-compatible server on loopback: moto's standalone server (`pip install 'moto[server]'`), started
 * for the test file and stopped after it.
 */
export async function startLocalS3(): Promise<LocalS3> {
  const port = await freePort();
  const child: ChildProcess = spawn(PYTHON, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const spawnFailed = new Promise<Error>((resolve) => child.once('error', resolve));

  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await Promise.race([
      canConnect(port).then((up) => (up ? 'up' : 'down')),
      exited.then(() => 'exited'),
      spawnFailed.then(() => 'failed'),
    ]);
    if (state === 'up') break;
    if (state === 'exited' || state === 'failed' || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `Could not start moto's S3 server (${PYTHON} -m moto.server): install it with pip install 'moto[server]'\n${stderr.slice(-2000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
