import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
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

/**
 * The committed histories under `dir`, named `<set>/<file>` without `.json` (a set is a sub-folder; `''` is `dir`
 * itself), set by set and sorted within each.
 */
export async function recordedHistories(dir: string, sets: readonly string[] = ['']): Promise<string[]> {
  const names: string[] = [];
  for (const set of sets) {
    const files = (await readdir(path.join(dir, set))).filter((f) => f.endsWith('.json')).sort();
    for (const file of files) names.push(path.posix.join(set, file.replace(/\.json$/, '')));
  }
  return names;
}

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/** How replays are run: the workflow code (a bundle is made of it unless given) and the worker's sinks. */
export interface ReplayOptions {
  /** A prebuilt bundle of that code (with interceptors, as a traced worker has it). */
  bundle?: { code: string };
  sinks?: ReplayWorkerOptions['sinks'];
}

/**
 * Replays `histories` (a history as `temporal workflow show --output json` exports it, or as the client fetches
 * it) through the workflow code at `workflowsPath`: one result per history, in order, `error` set for one the
 * code does not replay.
 */
export async function replayHistories(
  workflowsPath: string,
  histories:
    | Iterable<{ workflowId: string; history: unknown }>
    | AsyncIterable<{ workflowId: string; history: unknown }>,
  options: ReplayOptions = {},
): Promise<{ workflowId: string; error?: unknown }[]> {
  const bundle = options.bundle ?? (await bundleWorkflowCode({ workflowsPath, logger: silent }));
  const results: { workflowId: string; error?: unknown }[] = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: bundle, ...(options.sinks && { sinks: options.sinks }) },
    histories,
  ))
    results.push(result);
  return results;
}

/** Replays the named histories of `dir` (see recordedHistories) through the workflow code at `workflowsPath`. */
export async function replayRecorded(
  dir: string,
  names: readonly string[],
  workflowsPath: string,
  options: ReplayOptions = {},
): Promise<{ workflowId: string; error?: unknown }[]> {
  async function* histories() {
    for (const name of names) {
      const history: unknown = JSON.parse(await readFile(path.join(dir, `${name}.json`), 'utf8'));
      yield { workflowId: name, history };
    }
  }
  return replayHistories(workflowsPath, histories(), options);
}

/** The patches a history's run took (its `core_patch` markers), in order. */
export function patchesIn(history: { events?: unknown[] | null }): string[] {
  return (history.events ?? []).flatMap((event) => {
    const marker = (
      event as { markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, unknown> } }
    ).markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const data = (marker.details?.['patch-data'] as { payloads: { data: string | Uint8Array }[] })
      .payloads[0]!.data;
    const json = typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data);
    return [(JSON.parse(json.toString('utf8')) as { id: string }).id];
  });
}

/**
 * Everything a workflow's stored history holds, as text to search: the events as JSON (payload data there is
 * base64, as `temporal workflow show` prints it), then every byte field of the events decoded as UTF-8 (the default
 * payload converter's JSON), with `\uXXXX` escapes unescaped so a name written escaped is still found.
 */
export async function historyText(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const decoded: string[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) {
      decoded.push(Buffer.from(value).toString('utf8'));
      return;
    }
    if (typeof value === 'string') {
      decoded.push(value);
      return;
    }
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    for (const key of Object.keys(value)) walk((value as Record<string, unknown>)[key]);
  };
  walk(history);
  const text = [JSON.stringify(history), ...decoded].join('\n');
  return text.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A piece of personal data to look for, named for the failure message. */
export interface Needle {
  label: string;
  value: string;
}

/** The needles found in `text` (case-insensitive), as `label: value`. */
export function needlesIn(text: string, needles: readonly Needle[]): string[] {
  const haystack = text.toLowerCase();
  return needles.filter((n) => haystack.includes(n.value.toLowerCase())).map((n) => `${n.label}: ${n.value}`);
}
