import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { expect, inject } from 'vitest';

/**
 * Saves a finished workflow's history as an operator would export it (`temporal workflow show --output json`),
 * the format `Worker.runReplayHistories` reads back in the replay tests.
 */
export async function exportHistory(workflowId: string, file: string): Promise<void> {
  const { stdout } = await promisify(execFile)(
    inject('temporalCliPath'),
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      inject('temporalAddress'),
      '--output',
      'json',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const history = JSON.parse(stdout) as { events: unknown[] };
  expect(history.events.length).toBeGreaterThan(5);
  await writeFile(file, `${JSON.stringify(history, null, 1)}\n`);
}
