import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { AppError } from '../../errors.ts';
import { createLogger } from '../../logger.ts';
import { cachedWorkflowBundle } from '../../temporal/workflow-bundle-cache.ts';
import { workflowsPath } from '../../temporal/worker.ts';
import { UsageError, printResult, type CliCommand, type CliContext } from '../command.ts';

type History = temporal.api.history.v1.IHistory;

/** An exported history larger than this is not read: no workflow of Wathiq's comes near it. */
const MAX_HISTORY_FILE_BYTES = 512 * 1024 * 1024;
const PAGE_SIZE = 1000;

/** The workflow's history from the server, page by page, with the count so far on stderr. */
async function fetchHistory(ctx: CliContext, workflowId: string, runId?: string): Promise<History> {
  return ctx.withTemporal(async ({ client }) => {
    const events: temporal.api.history.v1.IHistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await client.workflowService
        .getWorkflowExecutionHistory({
          namespace: client.options.namespace,
          execution: { workflowId, ...(runId && { runId }) },
          maximumPageSize: PAGE_SIZE,
          ...(nextPageToken && { nextPageToken }),
        })
        .catch((err: unknown) => {
          const code = (err as { code?: number }).code;
          // gRPC 5 NOT_FOUND: no such workflow in this namespace.
          if (code === 5)
            throw AppError.notFound(`Workflow ${workflowId} in namespace ${client.options.namespace}`);
          throw err;
        });
      events.push(...(page.history?.events ?? []));
      ctx.io.err(`fetched ${events.length} events\n`);
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    return { events };
  });
}

async function readHistoryFile(file: string): Promise<History> {
  const size = await stat(file).then(
    (s) => s.size,
    () => {
      throw new UsageError(`--history: cannot read ${file}`);
    },
  );
  if (size > MAX_HISTORY_FILE_BYTES) throw new UsageError(`--history: ${file} is larger than 512 MB`);
  let history: unknown;
  try {
    history = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    throw new UsageError(`--history: ${file} is not JSON`);
  }
  const events = (history as { events?: unknown } | null)?.events;
  if (!Array.isArray(events) || events.length === 0) {
    throw new UsageError(
      `--history: ${file} holds no events (export it with temporal workflow show --output json)`,
    );
  }
  return history as History;
}

export const workflowCommands: CliCommand[] = [
  {
    words: ['workflows', 'replay'],
    synopsis: '<workflow id> [--run-id R] [--history FILE] [--json]',
    summary: "Replay a workflow's history against the current workflow code",
    details: `Fetches the history from TEMPORAL_ADDRESS (or reads --history, an export of
\`temporal workflow show --output json\`) and replays it through the workflow bundle made from this checkout,
as a worker about to be deployed would. Exits 1 when the code does not reproduce the history (non-determinism):
deploying it would break that workflow.`,
    options: { 'run-id': { type: 'string' }, history: { type: 'string' } },
    positionals: { min: 1, max: 1 },
    async run(ctx, { values, positionals }) {
      const workflowId = positionals[0]!;
      const config = ctx.config();
      const history =
        typeof values.history === 'string'
          ? await readHistoryFile(path.resolve(values.history))
          : await fetchHistory(
              ctx,
              workflowId,
              typeof values['run-id'] === 'string' ? values['run-id'] : undefined,
            );
      const logger = createLogger({ logLevel: 'silent' });
      // The replay reports a mismatch as its error; the SDK core's own warnings about it would otherwise be
      // printed on stdout, in the middle of the result. Only its errors are shown, on stderr.
      Runtime.install({
        shutdownSignals: [],
        logger: new DefaultLogger('ERROR', (entry) => ctx.io.err(`temporal: ${entry.message}\n`)),
        telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
      });
      ctx.io.err('bundling the workflow code\n');
      const bundle = await cachedWorkflowBundle({
        workflowsPath: workflowsPath(),
        dir: path.join(config.dataDir, 'cache'),
        logger,
      });
      const count = history.events?.length ?? 0;
      ctx.io.err(`replaying ${count} events\n`);
      const started = performance.now();
      let failure: { kind: 'nondeterminism' | 'error'; message: string } | undefined;
      try {
        await Worker.runReplayHistory({ workflowBundle: { code: bundle.code } }, history, workflowId);
      } catch (err) {
        failure = {
          kind: err instanceof DeterminismViolationError ? 'nondeterminism' : 'error',
          message: err instanceof Error ? err.message : String(err),
        };
      }
      const ms = Math.round(performance.now() - started);
      const data = {
        workflow_id: workflowId,
        events: count,
        replayed: !failure,
        ...(failure && { failure }),
        ms,
      };
      printResult(
        ctx,
        () =>
          failure
            ? `${workflowId}: ${failure.kind === 'nondeterminism' ? 'NOT deterministic' : 'replay failed'}: ${failure.message}`
            : `${workflowId}: ${count} events replayed through the current code in ${ms} ms`,
        data,
      );
      return failure ? 1 : 0;
    },
  },
];
