import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../helpers/approval-flow.ts';
import { startRole, type RunningProcess } from '../helpers/processes.ts';
import { declaredTypes, parseSamples, type Sample } from '../helpers/prometheus.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * deploy/prometheus/alerts.yml, the alerts operators load: Prometheus's own promtool finds the rules valid and fires
 * each one in the unit tests of alerts.test.yml (every alert has one); every metric the rules read is served by a
 * real worker or API process, and on an idle worker the slots alert has nothing to fire on.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const RULES = path.join(ROOT, 'deploy/prometheus/alerts.yml');
const RULE_TESTS = path.join(ROOT, 'deploy/prometheus/alerts.test.yml');

async function promtool(): Promise<string> {
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts/ensure-promtool.sh')]);
  return stdout.trim();
}

describe('deploy/prometheus/alerts.yml', () => {
  it('is valid for promtool, and each alert fires in its unit tests', async () => {
    const bin = await promtool();
    const checked = await run(bin, ['check', 'rules', RULES]);
    expect(checked.stdout).toMatch(/SUCCESS: 7 rules found/);
    const tested = await run(bin, ['test', 'rules', RULE_TESTS]);
    expect(tested.stdout).toMatch(/SUCCESS/);

    const alerts = [...(await readFile(RULES, 'utf8')).matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);
    const tests = await readFile(RULE_TESTS, 'utf8');
    const firing = new Set(
      [...tests.matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels:/g)].map((m) => m[1]),
    );
    expect(alerts.sort()).toEqual([
      'WathiqApprovalSignalsDropped',
      'WathiqApprovalSignalsStuck',
      'WathiqArchiveRenewalFailed',
      'WathiqFinalizationFailed',
      'WathiqNotificationsFailing',
      'WathiqWebhookBacklogGrowing',
      'WathiqWorkerSlotsExhausted',
    ]);
    expect([...firing].sort()).toEqual(alerts);
  }, 120_000);

  describe('against a real worker’s and API’s metrics', () => {
    let dir: string;
    let database: TestDatabase;
    let worker: RunningProcess;
    let api: RunningProcess;
    let samples: Sample[];
    let text: string;
    let apiText: string;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-alerts-'));
      database = await createTestDatabase();
      const metricsPort = await freePort();
      worker = await startRole('worker', {
        NODE_ENV: 'test',
        DATA_DIR: path.join(dir, 'data'),
        DATABASE_URL: database.url,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: `alerts-${metricsPort}`,
        METRICS_PORT: String(metricsPort),
      });
      // The SDK's slot gauges appear once its pollers have started.
      await eventually(async () => {
        text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        samples = parseSamples(text);
        return samples.some((s) => s.name === 'temporal_worker_task_slots_available');
      }, 60_000);
      const apiMetricsPort = await freePort();
      api = await startRole('api', {
        NODE_ENV: 'test',
        DATA_DIR: path.join(dir, 'data'),
        DATABASE_URL: database.url,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        PORT: String(await freePort()),
        METRICS_PORT: String(apiMetricsPort),
      });
      apiText = await (await fetch(`http://127.0.0.1:${apiMetricsPort}/metrics`)).text();
    });

    afterAll(async () => {
      await api?.kill('SIGTERM');
      await worker?.kill('SIGTERM');
      await database?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it('reads only metrics the worker or the API serves', async () => {
      const rules = (await readFile(RULES, 'utf8')).replace(/^\s*#.*$/gm, '');
      const exprs = [...rules.matchAll(/expr: (\|\n(?:\s{10,}.*\n)+|.*)/g)].map((m) => m[1]!);
      const referenced = new Set(exprs.flatMap((e) => e.match(/\b(?:wathiq|temporal)_\w+/g) ?? []));
      expect(referenced.size).toBeGreaterThanOrEqual(5);
      // A counter with no sample yet (nothing has failed) is declared by its # TYPE line.
      const declared = new Set([...declaredTypes(text).keys(), ...declaredTypes(apiText).keys()]);
      const all = [...samples, ...parseSamples(apiText)];
      const served = (name: string) => all.some((s) => s.name === name) || declared.has(name);
      expect([...referenced].filter((name) => !served(name))).toEqual([]);
    });

    it('leaves the slots alert quiet on an idle worker: every kind of slot has some free', () => {
      const slots = samples.filter((s) => s.name === 'temporal_worker_task_slots_available');
      expect(slots.map((s) => s.labels.worker_type).sort()).toEqual(
        expect.arrayContaining(['ActivityWorker', 'WorkflowWorker']),
      );
      for (const s of slots) expect({ ...s.labels, free: s.value > 0 }).toMatchObject({ free: true });
    });
  });
});
