import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { threadCoreSeconds, threadKind } from '../../bench/thread-cpu.ts';
import { PDF_THREAD_NAME } from '../../src/pdf/workers/thread-name.ts';

describe("bench:lifecycle's CPU by thread", () => {
  it('tells the kinds of thread apart by id and name', () => {
    expect(threadKind(100, 100, 'node')).toBe('main');
    expect(threadKind(100, 101, PDF_THREAD_NAME)).toBe('pdf');
    expect(threadKind(100, 102, 'WorkerThread')).toBe('workers');
    expect(threadKind(100, 103, 'V8Worker')).toBe('v8');
    expect(threadKind(100, 104, 'V8 DefaultWorke')).toBe('v8');
    expect(threadKind(100, 105, 'tokio-runtime-w')).toBe('other');
    expect(threadKind(100, 106, 'libuv-worker')).toBe('other');
  });

  it.runIf(process.platform === 'linux')(
    'counts a live thread that named itself as a PDF thread under pdf, not under the other worker threads',
    async () => {
      // The thread renames itself as a PDF thread does (/proc/thread-self/comm), spins 300 ms of its own CPU, says so
      // and stays alive until it is told to end, so that its time is still in its task's entry when read.
      const thread = new Worker(
        `const { parentPort } = require('node:worker_threads');
         require('node:fs').writeFileSync('/proc/thread-self/comm', ${JSON.stringify(PDF_THREAD_NAME)});
         const spent = () => { const c = process.threadCpuUsage ? process.threadCpuUsage() : process.cpuUsage(); return (c.user + c.system) / 1000; };
         const start = spent(); while (spent() - start < 300);
         parentPort.postMessage('spun');
         parentPort.once('message', () => process.exit(0));`,
        { eval: true },
      );
      try {
        const before = await threadCoreSeconds(process.pid);
        await once(thread, 'message');
        const after = await threadCoreSeconds(process.pid);
        expect(after.pdf - before.pdf).toBeGreaterThanOrEqual(0.2);
        expect(after.workers - before.workers).toBeLessThan(0.1);
      } finally {
        thread.postMessage('end');
        await once(thread, 'exit');
      }
    },
  );
});
