import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PDF_PAGES } from '../../src/pdf/inspect-pdf.ts';
import { startApiServer, type RunningApi } from '../../src/runtime/api-server.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/**
 * The outside judge of the API contract (engineering guide, "Hostile input"): schemathesis, every check, over our
 * own /api/v1/openapi.json, against the real app on real PostgreSQL and Temporal. `.ci/run` installs the pinned
 * version with pip. No operation is excluded and every check is on. schemathesis/hooks.py teaches the fuzzer what
 * JSON Schema cannot state (uploads are PDFs, phone numbers valid for their country, an Idempotency-Key names one
 * request) and lifts schemathesis's limitation with forms that carry a file; schemathesis/schemathesis.toml
 * records the one decided answer a check does not expect. One worker and a fixed seed: the same run every time.
 */
const SCHEMATHESIS = process.env.SCHEMATHESIS_BIN ?? 'schemathesis';
const HOOKS = fileURLToPath(new URL('./schemathesis/hooks.py', import.meta.url));
const CONFIG = fileURLToPath(new URL('./schemathesis/schemathesis.toml', import.meta.url));
const SEED = '20261122';
// Examples per operation in the fuzzing and stateful phases (about 13 s of the run); the coverage phase, exhaustive,
// is nine tenths of it.
const MAX_EXAMPLES = '8';
// The test account's per-key limit, and nine tenths of it for schemathesis to stay under.
const TEST_LIMIT = 60_000;
const RUN_RATE = `${TEST_LIMIT * 0.9}/m`;

interface Run {
  code: number | null;
  output: string;
  error?: Error;
}

/** Runs a command without blocking the event loop: the app under test lives in this process. */
function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', (error) => resolve({ code: null, output: Buffer.concat(chunks).toString(), error }));
    child.on('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString() }));
  });
}

let service: TestService;
let api: RunningApi;
let account: TestAccount;
let scratch: string;
beforeAll(async () => {
  service = await startTestService();
  // A real limit the run must respect: the test account's plan allows TEST_LIMIT requests per key and minute, and
  // schemathesis keeps below it (--rate-limit). Set above what the run can send, so it never waits on it: about
  // 4,000 requests, over 2,000 in some minutes even on a loaded machine, against which 3000/m (2700/m for the
  // run) would hold back a run with the CPU to itself, and the enterprise plan's own 1000 took 5.5 minutes. The rate
  // limit itself has tests of its own (rate-limit.test.ts).
  const { plans } = service.config;
  api = await startApiServer(
    {
      ...service.deps,
      config: {
        ...service.config,
        plans: { ...plans, enterprise: { ...plans.enterprise, requestsPerMinute: TEST_LIMIT } },
      },
    },
    '127.0.0.1',
    0,
  );
  account = await service.createAccount({ plan: 'enterprise' });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-schemathesis-'));
});
afterAll(async () => {
  await api.stop();
  await service.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('schemathesis over /api/v1/openapi.json', () => {
  it('finds no failure with every check', { timeout: 600_000 }, async () => {
    const version = await run(SCHEMATHESIS, ['--version']);
    if (version.code !== 0) {
      throw new Error(
        `schemathesis is not installed (${version.error?.message ?? version.output.trim()}): ` +
          'pip install schemathesis==4.32.5 (as .ci/run does), or set SCHEMATHESIS_BIN',
      );
    }
    // The upload the hooks send: blank pages (small and quick to check), as many as an approver's page may name.
    const doc = await PDFDocument.create();
    for (let i = 0; i < MAX_PDF_PAGES; i++) doc.addPage([200, 200]);
    const pdf = path.join(scratch, 'upload.pdf');
    await writeFile(pdf, await doc.save());

    const args = [
      '--config-file',
      CONFIG,
      'run',
      `${api.url}/api/v1/openapi.json`,
      '--checks',
      'all',
      '--seed',
      SEED,
      '--max-examples',
      MAX_EXAMPLES,
      '--workers',
      '1',
      '--generation-database',
      'none',
      '--rate-limit',
      RUN_RATE,
      '--request-timeout',
      '30',
      // `--checks all` turns on max_response_time at 10 s. Our bound is 20 s (a call that needs the workflow's
      // answer then says 503), and a loaded CI machine can spend more than 10 s there: hold responses to 25 s.
      '--max-response-time',
      '25',
      // POST /templates's multipart body (roles, each with patterned keys and labels, beside a document's fields)
      // is more than Hypothesis's generator meets without filtering: its health check would stop that operation
      // before any request. The check only guards the generator's efficiency; every response check stays on.
      '--suppress-health-check',
      'filter_too_much',
      '--no-color',
      '-H',
      `Authorization: ${account.authorization}`,
    ];
    const result = await run(SCHEMATHESIS, args, {
      env: { ...process.env, SCHEMATHESIS_HOOKS: HOOKS, WATHIQ_FUZZ_PDF: pdf },
      cwd: scratch, // its caches (.schemathesis, .hypothesis) go there, not into the clone
    });
    const output = `${version.output.trim()}\n$ schemathesis ${args.join(' ').replace(account.authorization, 'Bearer …')}\n${result.output}`;
    // The summary (phases, operations, failures) in the test log, also when everything passed. Each line is
    // quoted: schemathesis closes like pytest ("==== 2 warnings in 162s ===="), and a CI that reads runners'
    // closing lines would take that, standing alone, for a pytest run that executed no test.
    console.log(quoted(output.slice(Math.max(0, output.lastIndexOf('= SUMMARY =') - 40))));
    expect(result.error, output).toBeUndefined();
    expect(output).toMatch(/Test cases:/); // it ran
    expect(result.code, output).toBe(0);
  });
});

/** Every line of schemathesis's output behind a `schemathesis | ` margin, so none reads as a runner's closing line. */
function quoted(text: string): string {
  return text
    .split('\n')
    .map((line) => `schemathesis | ${line}`)
    .join('\n');
}
