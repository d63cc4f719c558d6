import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually, startFlowHarness, type FlowHarness } from '../helpers/approval-flow.ts';
import { createTemplate, type TemplateJson } from '../templates/support.ts';
import { created, postRows, rowsFor } from '../bulk-sends/support.ts';

/**
 * Records the bulk-send workflow histories that `bulk-send-replay.test.ts` replays:
 * `RECORD_HISTORIES=1 npx vitest run test/replay/record-bulk-send-histories.test.ts`. A committed history is never
 * recorded again (names already there are skipped); when the workflow changes on purpose, record the new runs
 * under new names beside them.
 */
const DIR = path.resolve(import.meta.dirname, '../histories/bulk-send');
const recording = (name: string) =>
  process.env.RECORD_HISTORIES === '1' && !existsSync(path.join(DIR, `${name}.json`));

/** Every run of a workflow id, oldest first, exported as `temporal workflow show --output json` does. */
async function exportRuns(h: FlowHarness, workflowId: string): Promise<unknown[]> {
  const runs: string[] = [];
  for await (const w of h.service.temporal.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(w.runId);
  const out: unknown[] = [];
  for (const runId of runs.reverse()) {
    const { stdout } = await promisify(execFile)(
      inject('temporalCliPath'),
      [
        'workflow',
        'show',
        '--workflow-id',
        workflowId,
        '--run-id',
        runId,
        '--address',
        inject('temporalAddress'),
        '--output',
        'json',
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    out.push(JSON.parse(stdout));
  }
  return out;
}

const save = (name: string, history: unknown) =>
  writeFile(path.join(DIR, `${name}.json`), `${JSON.stringify(history, null, 1)}\n`);

describe.runIf(process.env.RECORD_HISTORIES === '1')('record bulk-send workflow histories', () => {
  let h: FlowHarness;
  let template: TemplateJson;
  beforeAll(async () => {
    h = await startFlowHarness({
      env: {
        BULK_SEND_PAGE_SIZE: '2',
        BULK_SEND_PAGES_PER_RUN: '2',
        WHATSAPP_TIER_RECIPIENTS_PER_DAY: '8',
        WHATSAPP_THROUGHPUT_MPS: '100',
        BULK_SEND_TIME_SCALE: String(4 / 86_400),
      },
    });
    template = await createTemplate(h.service, h.account);
  });
  afterAll(() => h?.close());

  const done = (id: string) => h.service.temporal.client.workflow.getHandle(`bulk-send-${id}`).result();

  it.runIf(recording('continued-first-run') || recording('continued-completed'))(
    'a bulk send over three runs (continue-as-new), completed',
    async () => {
      await new Promise((r) => setTimeout(r, 4_500));
      const bulk = await created(
        await postRows(h.service, h.account, template.id, { rows: rowsFor(4, 700_000) }),
      );
      await eventually(async () => {
        const row = await h.service.database
          .db('bulk_sends')
          .where({ id: bulk.id })
          .first<{ status: string }>('status');
        return row?.status === 'completed';
      }, 120_000);
      const runs = await exportRuns(h, `bulk-send-${bulk.id}`);
      expect(runs.length).toBeGreaterThan(1);
      await save('continued-first-run', runs[0]);
      await save('continued-completed', runs.at(-1));
    },
    180_000,
  );

  it.runIf(recording('paused-resumed'))(
    'paused for the tier share, then resumed and completed',
    async () => {
      await new Promise((r) => setTimeout(r, 4_500));
      const bulk = await created(
        await postRows(h.service, h.account, template.id, { rows: rowsFor(5, 710_000) }),
      );
      await eventually(async () => {
        const row = await h.service.database
          .db('bulk_sends')
          .where({ id: bulk.id })
          .first<{ status: string }>('status');
        return row?.status === 'completed';
      }, 120_000);
      const runs = await exportRuns(h, `bulk-send-${bulk.id}`);
      await save('paused-resumed', runs.at(-1));
    },
    180_000,
  );

  it.runIf(recording('cancelled-while-paused'))(
    'cancelled while paused: the signal ends it',
    async () => {
      await new Promise((r) => setTimeout(r, 4_500));
      const bulk = await created(
        await postRows(h.service, h.account, template.id, { rows: rowsFor(6, 720_000) }),
      );
      await eventually(async () => {
        const row = await h.service.database
          .db('bulk_sends')
          .where({ id: bulk.id })
          .first<{ status: string }>('status');
        return row?.status === 'paused_for_quota';
      }, 120_000);
      const res = await h.service.request(`/bulk-sends/${bulk.id}/cancel`, {
        method: 'POST',
        account: h.account,
      });
      expect(res.status).toBe(200);
      await done(bulk.id);
      const runs = await exportRuns(h, `bulk-send-${bulk.id}`);
      await save('cancelled-while-paused', runs.at(-1));
    },
    180_000,
  );
});
