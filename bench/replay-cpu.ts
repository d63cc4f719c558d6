/**
 * CPU of the approval workflow's own code, without a server: `npx tsx bench/replay-cpu.ts [--repeat 20] [--rounds 5]
 * [--baseline <git ref>]` replays the recorded `documentApproval` histories (test/histories/document-approval)
 * through the workflow bundle with `Worker.runReplayHistories`, `--repeat` times each in each of `--rounds` rounds,
 * and prints per history replayed (the median round) the CPU ms of the process and of its main thread (a replay runs
 * the workflow sandbox there, as the worker's workflow thread does: the SDK's `runInContext` and its promise hook
 * included), the promises the workflow context created, and the calls into the sandbox per activation (`activate`,
 * then one `tryUnblockConditions` per pass until no condition unblocks, then `concludeActivation`). With
 * `--baseline`, the workflow code of that ref (its `src/` in a scratch folder) is replayed too, alternating round by
 * round, and printed as the ratio of this code to it.
 *
 * With `--sdk-costs`, this code is also replayed (alternating round by round) with two of the SDK's safeguards
 * switched off in this process, to measure what they cost, not to run without them: the time-out on each call into
 * the sandbox (Node starts and joins a watchdog thread per call: the SDK's deadlock detection,
 * `isolateExecutionTimeout`) and the stack-trace tracking (a promise hook that records where each promise of the
 * workflow was made, for the `__stack_trace` query the Temporal UI shows).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { BaseVMWorkflow, globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared.js';
import { createLogger } from '../src/logger.ts';
import { installTemporalRuntime } from '../src/temporal/runtime.ts';
import { workflowsPath } from '../src/temporal/worker.ts';
import { recordedHistories } from '../test/helpers/histories.ts';
import { threadCoreSeconds } from './thread-cpu.ts';

const { values: args } = parseArgs({
  options: {
    repeat: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    baseline: { type: 'string' },
    'sdk-costs': { type: 'boolean', default: false },
  },
});
const REPEAT = Number(args.repeat);
if (!Number.isInteger(REPEAT) || REPEAT < 1) throw new Error('--repeat takes a whole number from 1');
const ROUNDS = Number(args.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('--rounds takes a whole number from 1');
const ROOT = path.resolve(import.meta.dirname, '..');
const HISTORIES = path.join(ROOT, 'test/histories/document-approval');

// Histories that park or give up log warnings from the workflow; they are expected here.
installTemporalRuntime(createLogger({ logLevel: 'silent' }));
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/** The middle value (the upper of the two middle ones for an even count). */
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `xs` in the order of round `round`: each round starts one further along, so none always runs first. */
const inTurn = <T>(xs: readonly T[], round: number): T[] => [
  ...xs.slice(round % xs.length),
  ...xs.slice(0, round % xs.length),
];

interface Code {
  name: string;
  bundle: { code: string };
}

/**
 * The workflow entry of `ref`: its `src/` in a scratch folder beside a link to this checkout's node_modules (the
 * bundler compiles no TypeScript found under a node_modules folder).
 */
function entryAt(ref: string): string {
  const sha = execFileSync('git', ['rev-parse', ref], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = path.join(os.tmpdir(), `wathiq-replay-cpu-${sha}`);
  if (!existsSync(dir)) {
    mkdirSync(dir);
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    execFileSync('sh', ['-c', `git archive ${sha} src | tar -x -C ${dir}`], { cwd: ROOT });
  }
  return path.join(dir, 'src/workflows/index.ts');
}

type History = { workflowId: string; history: unknown };

async function replayAll(code: Code, histories: readonly History[], repeat: number): Promise<void> {
  function* all() {
    for (let i = 0; i < repeat; i++)
      for (const h of histories) yield { workflowId: `${h.workflowId}-${i}`, history: h.history };
  }
  for await (const result of Worker.runReplayHistories({ workflowBundle: code.bundle }, all()))
    if (result.error) throw new Error(`${result.workflowId} did not replay`, { cause: result.error });
}

interface Counts {
  promises: number;
  activations: number;
  calls: Map<string, number>;
}

/**
 * One replay of every history with the counting on: a promise hook that counts the promises made in another realm
 * than this one (the workflow's vm context), and each activation's calls into the sandbox, counted on the
 * workflow's `workflowModule` (the SDK's proxy that calls `runInContext`).
 */
async function count(code: Code, histories: readonly History[]): Promise<Counts> {
  const counts: Counts = { promises: 0, activations: 0, calls: new Map() };
  const stop = v8.promiseHooks.onInit((promise) => {
    if (!(promise instanceof Promise)) counts.promises++;
  }) as () => void;
  const proto = BaseVMWorkflow.prototype as unknown as {
    activate: (this: { workflowModule: object }, activation: unknown) => Promise<unknown>;
  };
  const activate = proto.activate;
  const wrapped = new WeakSet<object>();
  proto.activate = function (activation) {
    counts.activations++;
    if (!wrapped.has(this.workflowModule)) {
      const inner = this.workflowModule as Record<string, (...a: unknown[]) => unknown>;
      this.workflowModule = new Proxy(inner, {
        get: (target, fn: string) => {
          const call = target[fn]!;
          return (...a: unknown[]) => {
            counts.calls.set(fn, (counts.calls.get(fn) ?? 0) + 1);
            return call(...a);
          };
        },
      });
      wrapped.add(this.workflowModule);
    }
    return activate.call(this, activation);
  };
  try {
    await replayAll(code, histories, 1);
  } finally {
    proto.activate = activate;
    stop();
  }
  return counts;
}

interface Cpu {
  process: number;
  main: number;
}

async function timed(code: Code, histories: readonly History[]): Promise<Cpu> {
  const p0 = process.cpuUsage();
  const t0 = await threadCoreSeconds(process.pid);
  await replayAll(code, histories, REPEAT);
  const p1 = process.cpuUsage(p0);
  const t1 = await threadCoreSeconds(process.pid);
  const n = REPEAT * histories.length;
  return { process: (p1.user + p1.system) / 1000 / n, main: ((t1.main - t0.main) * 1000) / n };
}

async function main() {
  const names = await recordedHistories(HISTORIES);
  const histories = await Promise.all(
    names.map(async (name) => ({
      workflowId: name,
      history: JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as unknown,
    })),
  );
  const codes: Code[] = [
    {
      name: 'this code',
      bundle: await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: silent }),
    },
  ];
  if (args.baseline)
    codes.push({
      name: args.baseline,
      bundle: await bundleWorkflowCode({ workflowsPath: entryAt(args.baseline), logger: silent }),
    });
  const per = new Map<string, { counts: Counts; cpu: Cpu[] }>();
  for (const code of codes) {
    await replayAll(code, histories, 2); // warm: the bundle's first context, V8's compilation
    per.set(code.name, { counts: await count(code, histories), cpu: [] });
  }
  for (let round = 0; round < ROUNDS; round++)
    for (const code of inTurn(codes, round)) per.get(code.name)!.cpu.push(await timed(code, histories));

  console.log(
    `${histories.length} documentApproval histories, replayed ${REPEAT} times each in ${ROUNDS} rounds per code (load average ${os.loadavg()[0]!.toFixed(2)}):`,
  );
  const rows = codes.map(({ name }) => {
    const { counts, cpu } = per.get(name)!;
    const n = histories.length;
    const calls = [...counts.calls]
      .map(([fn, c]) => `${fn} ${(c / counts.activations).toFixed(2)}`)
      .join(', ');
    const row = {
      process: median(cpu.map((c) => c.process)),
      main: median(cpu.map((c) => c.main)),
      promises: counts.promises / n,
    };
    console.log(
      `  ${name}: CPU ms per history, process ${row.process.toFixed(2)}, main thread ${row.main.toFixed(2)} (rounds: ${cpu.map((c) => c.main.toFixed(2)).join(' ')}); ` +
        `promises ${row.promises.toFixed(1)} per history; ${(counts.activations / n).toFixed(2)} activations per history, calls into the sandbox per activation: ${calls}`,
    );
    return row;
  });
  if (rows.length === 2) {
    const [now, base] = rows as [(typeof rows)[0], (typeof rows)[0]];
    console.log(
      `  this code against ${args.baseline}: process CPU ${(now.process / base.process).toFixed(3)}×, main thread ${(now.main / base.main).toFixed(3)}×, promises ${(now.promises / base.promises).toFixed(3)}×`,
    );
  }
  if (args['sdk-costs'])
    for (const l of await safeguardCosts(codes[0]!, histories, per.get(codes[0]!.name)!.counts))
      console.log(l);
}

/** Which of the SDK's safeguards a replay runs with (`--sdk-costs`). */
interface Safeguards {
  name: string;
  timeout: boolean;
  stackTraces: boolean;
}

const SAFEGUARDS: Safeguards[] = [
  { name: 'as the worker runs it', timeout: true, stackTraces: true },
  { name: 'without the time-out', timeout: false, stackTraces: true },
  { name: 'without the stack traces', timeout: true, stackTraces: false },
  { name: 'without either', timeout: false, stackTraces: false },
];

/**
 * Switches for the safeguards of this process's replays, put in once: the `timeout` of the SDK's calls into the
 * sandbox (each a `Script.runInContext`; Node starts no watchdog thread without one) is dropped, and the SDK's
 * stack-trace hooks (its promise hook and `prepareStackTrace`) are uninstalled, or put back.
 */
function safeguardSwitches(): (want: Safeguards) => void {
  let timeoutOn = true;
  let stackTracesOn = true;
  const runInContext = Reflect.get(vm.Script.prototype, 'runInContext') as (
    this: vm.Script,
    ...args: Parameters<vm.Script['runInContext']>
  ) => unknown;
  vm.Script.prototype.runInContext = function (this: vm.Script, context, options): unknown {
    return runInContext.call(this, context, timeoutOn ? options : { ...options, timeout: undefined });
  };
  // Each replay's workflow creator installs the hooks again (install is idempotent): not while they are off.
  const install = globalHandlers.install.bind(globalHandlers);
  globalHandlers.install = () => {
    if (stackTracesOn) install();
  };
  return (want) => {
    timeoutOn = want.timeout;
    stackTracesOn = want.stackTraces;
    if (want.stackTraces) install();
    else if (globalHandlers.installed) globalHandlers.uninstall();
  };
}

/** This code replayed under each of SAFEGUARDS, alternating round by round; its lines. */
async function safeguardCosts(code: Code, histories: readonly History[], counts: Counts): Promise<string[]> {
  const cpu = new Map<string, number[]>(SAFEGUARDS.map((s) => [s.name, []]));
  const useSafeguards = safeguardSwitches();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of inTurn(SAFEGUARDS, round)) {
        useSafeguards(s);
        cpu.get(s.name)!.push((await timed(code, histories)).process);
      }
    }
  } finally {
    useSafeguards(SAFEGUARDS[0]!);
  }
  const n = histories.length;
  const medians = SAFEGUARDS.map((s) => median(cpu.get(s.name)!));
  const [full, noTimeout, noStackTraces, neither] = medians as [number, number, number, number];
  const activations = counts.activations / n;
  const calls = [...counts.calls.values()].reduce((a, b) => a + b, 0) / n;
  const promises = counts.promises / n;
  const [timeout, stackTraces, both] = [full - noTimeout, full - noStackTraces, full - neither];
  return [
    `  the SDK's safeguards, switched off in this process to measure them (process CPU ms per history, median of ${ROUNDS} rounds, alternated):`,
    `    ${SAFEGUARDS.map((s, i) => `${s.name} ${medians[i]!.toFixed(2)}`).join(', ')}`,
    `    the time-out on each call into the sandbox (a watchdog thread per call: deadlock detection): ${timeout.toFixed(2)} ms = ${((timeout * 1000) / calls).toFixed(0)} µs a call (${calls.toFixed(1)} calls), ${(timeout / activations).toFixed(2)} ms an activation`,
    `    the stack-trace tracking (a promise hook: the Temporal UI's stack trace): ${stackTraces.toFixed(2)} ms = ${((stackTraces * 1000) / promises).toFixed(0)} µs a promise (${promises.toFixed(1)} promises), ${(stackTraces / activations).toFixed(2)} ms an activation`,
    `    both: ${both.toFixed(2)} ms, ${((100 * both) / full).toFixed(0)} % of the replay's CPU`,
  ];
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
