/**
 * The targets users feel, as bench:lifecycle prints them: what an approved document costs in CPU, against one
 * minimal Temporal round trip measured in the same run; and, at half the saturated rate, how long an approver
 * waits for the answer to a tap and for the signed PDF after the last action.
 */

/**
 * CPU of each process, in core-seconds. The service: the Temporal server (and its own PostgreSQL), the worker,
 * Wathiq's PostgreSQL and the API, each in a process of its own. Apart: the benchmark's own process (the driver
 * playing the approvers, the stand-in for Meta's Graph API, and the round trip's client and worker).
 */
export interface CoreSeconds {
  temporal: number;
  worker: number;
  postgres: number;
  api: number;
  benchmark: number;
}

/** What a document costs: the service's processes, not the driver and the fake Graph API beside them. */
export const serviceCoreSeconds = (c: CoreSeconds): number => c.temporal + c.worker + c.postgres + c.api;

/**
 * What a round trip costs: the service's processes (idle but for Temporal) and the benchmark's, where the round
 * trip's client and worker run.
 */
export const roundTripCoreSeconds = (c: CoreSeconds): number => serviceCoreSeconds(c) + c.benchmark;

const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

const verdict = (met: boolean) => (met ? 'met' : 'not met');

/** Cost per approved document in round trips: at most this many. */
export const COST_TARGET = 6;
/** An approver's tap answered, p99, at half the saturated rate. */
export const TAP_P99_TARGET_MS = 150;
/** The last action to a downloadable signed PDF, p99, at half the saturated rate. */
export const PDF_P99_TARGET_MS = 1500;

export function costLines(
  perDocument: CoreSeconds,
  perRoundTrip: CoreSeconds,
  loadAverage: number,
): string[] {
  const doc = serviceCoreSeconds(perDocument);
  const trip = roundTripCoreSeconds(perRoundTrip);
  const ratio = doc / trip;
  const parts = (c: CoreSeconds) =>
    `Temporal ${c.temporal.toFixed(4)}, worker ${c.worker.toFixed(4)}, PostgreSQL ${c.postgres.toFixed(4)}, API ${c.api.toFixed(4)}`;
  return [
    `    cost per approved document: ${doc.toFixed(4)} core-seconds (${parts(perDocument)}); not counted: the driver and the fake Graph API ${perDocument.benchmark.toFixed(4)}`,
    `      = ${ratio.toFixed(2)}× one minimal round trip's ${trip.toFixed(4)} core-seconds (${parts(perRoundTrip)}, its client and worker ${perRoundTrip.benchmark.toFixed(4)}) — target ≤ ${COST_TARGET}×: ${verdict(ratio <= COST_TARGET)} (load average ${loadAverage.toFixed(2)})`,
  ];
}

export function halfRateLines(input: {
  saturatedRate: number;
  pacedRate: number;
  documents: number;
  achievedRate: number;
  tapsMs: number[];
  lastActionToPdfMs: number[];
}): string[] {
  const taps = [...input.tapsMs].sort((a, b) => a - b);
  const pdf = [...input.lastActionToPdfMs].sort((a, b) => a - b);
  const tap99 = percentile(taps, 99);
  const pdf99 = percentile(pdf, 99);
  return [
    `\n  at half the saturated rate: ${input.documents} documents started at ${input.pacedRate.toFixed(2)}/s (saturated ${input.saturatedRate.toFixed(2)}/s; ${input.achievedRate.toFixed(2)}/s achieved)`,
    `    an approver's tap answered: p50 ${percentile(taps, 50).toFixed(0)} ms, p99 ${tap99.toFixed(0)} ms (${taps.length} actions) — target p99 ≤ ${TAP_P99_TARGET_MS} ms: ${verdict(tap99 <= TAP_P99_TARGET_MS)}`,
    `    last action → downloadable signed PDF: p50 ${percentile(pdf, 50).toFixed(0)} ms, p99 ${pdf99.toFixed(0)} ms (${pdf.length} documents) — target p99 ≤ ${PDF_P99_TARGET_MS} ms: ${verdict(pdf99 <= PDF_P99_TARGET_MS)}`,
  ];
}

/** What the capacity model needs of PostgreSQL: rows and bytes (tables, indexes and TOAST) per document. */
export async function storageLines(
  db: { raw<T>(sql: string): Promise<T> },
  documents: number,
): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { name: string; bytes: string }[] }>(
    `SELECT relname AS name, pg_total_relation_size(relid) AS bytes FROM pg_stat_user_tables
      WHERE schemaname = 'public' ORDER BY pg_total_relation_size(relid) DESC`,
  );
  const counted: { name: string; rows: number; bytes: number }[] = [];
  for (const r of rows) {
    const { rows: n } = await db.raw<{ rows: { n: string }[] }>(`SELECT count(*) AS n FROM "${r.name}"`);
    counted.push({ name: r.name, rows: Number(n[0]!.n), bytes: Number(r.bytes) });
  }
  const rowsPer = counted.reduce((s, t) => s + t.rows, 0) / documents;
  const bytesPer = counted.reduce((s, t) => s + t.bytes, 0) / documents;
  return [
    `\n  PostgreSQL after the run (${documents} documents): ${rowsPer.toFixed(1)} rows and ${(bytesPer / 1024).toFixed(1)} KiB (tables, indexes, TOAST) per document; the largest:`,
    ...counted
      .filter((t) => t.rows > 0)
      .slice(0, 8)
      .map(
        (t) =>
          `      ${t.name.padEnd(28)} ${(t.rows / documents).toFixed(2).padStart(7)} rows  ${(t.bytes / documents / 1024).toFixed(2).padStart(8)} KiB`,
      ),
  ];
}

/** `GET /documents/{id}` at its connections: p99 under this many ms. */
export const READ_P99_TARGET_MS = 20;
/** … and at least this many times the naive handler's rate. */
export const READ_RATIO_TARGET = 1.5;

interface ReadFigures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  failures: Record<string, number>;
  /** The server's CPU time per request: what the machine's load leaves alone. */
  cpuMsPerRequest: number;
}

export function documentReadLines(input: {
  documents: number;
  accounts: number;
  connections: number;
  loadAverage: number;
  naive: ReadFigures;
  api: ReadFigures;
}): string[] {
  const { naive, api } = input;
  const ratio = api.rps / naive.rps;
  const failed = (r: ReadFigures) => {
    const all = Object.entries(r.failures);
    return all.length ? `; not 200: ${all.map(([status, n]) => `${n} × ${status}`).join(', ')}` : '';
  };
  const figures = (r: ReadFigures) =>
    `${r.rps.toFixed(0)} requests/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.cpuMsPerRequest.toFixed(3)} CPU ms a request${failed(r)}`;
  const clean = Object.keys(api.failures).length === 0 && Object.keys(naive.failures).length === 0;
  const met = clean && api.p99 < READ_P99_TARGET_MS && ratio >= READ_RATIO_TARGET;
  return [
    `\n  GET /documents/{id} right after the load: ${input.connections} connections, ${api.requests} requests each at random over the run's ${input.documents} documents (${input.accounts} accounts; load average ${input.loadAverage.toFixed(2)})`,
    `    naive handler (Koa + pg, the key then the document with its approvers): ${figures(naive)}`,
    `    the API: ${figures(api)} = ${ratio.toFixed(2)}× the naive handler — target p99 < ${READ_P99_TARGET_MS} ms and ≥ ${READ_RATIO_TARGET}×: ${verdict(met)}`,
  ];
}
