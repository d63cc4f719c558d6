import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureTestTemporalRuntime } from '../helpers/temporal-runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { startTracing, type Tracing } from '../../src/tracing/sdk.ts';
import { recordedHistories, replayRecorded } from '../helpers/histories.ts';

ensureTestTemporalRuntime();

const HISTORIES = path.resolve(import.meta.dirname, '../histories');
/** Every committed history: the approval workflow's two sets, and the webhook queue's and rounds' workflows. */
const SETS = ['', 'v2', 'webhooks', 'webhook-rounds'];
/** A class the workflow interceptor module defines; its name survives bundling. */
const INTERCEPTOR_MARK = 'TracingInboundInterceptor';

let tracing: Tracing | undefined;
afterAll(() => tracing?.shutdown());

describe('the workflows with tracing on', () => {
  it('replay every recorded history, recorded without tracing, with the tracing interceptors in the bundle', async () => {
    const exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: 'replay', exporter });
    const bundle = await bundleWorkflowCode({
      workflowsPath: workflowsPath(),
      workflowInterceptorModules: tracing.workflowInterceptorModules,
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
    });
    // The interceptors are in this bundle, and only in this one: the untraced workers' bundle (built by the
    // global setup as the worker builds it without tracing) has none.
    expect(bundle.code).toContain(INTERCEPTOR_MARK);
    expect(await readFile(inject('workflowBundlePath'), 'utf8')).not.toContain(INTERCEPTOR_MARK);

    const names = await recordedHistories(HISTORIES, SETS);
    expect(names.length).toBeGreaterThanOrEqual(20);
    const results = await replayRecorded(HISTORIES, names, workflowsPath(), {
      bundle,
      sinks: tracing.worker.sinks,
    });
    expect(results.map((r) => r.workflowId)).toEqual(names);
    const failed = results
      .filter((r) => r.error)
      .map((r) => `${r.workflowId}: ${String(r.error).slice(0, 400)}`);
    expect(failed).toEqual([]);

    // A replay re-runs the workflow code but exports nothing: workflow spans leave only from new work.
    await tracing.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  }, 180_000);
});
