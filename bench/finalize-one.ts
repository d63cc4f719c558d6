/**
 * CPU of finalizing the lifecycle benchmark's document, in this process, over many repetitions:
 * `npx tsx bench/finalize-one.ts [--documents 200]`. The document is the one `bench:lifecycle` uploads (one page,
 * three approvers: a typed signature on the page, approve and review by WhatsApp button); each repetition composes
 * it (what the worker's PDF threads do) and signs it (the worker's main thread). Prints CPU ms per document of
 * each step, by kind of thread (the V8 platform's share is the GC and compilation the allocations cause), and the
 * first document's apart (what a fresh PDF thread pays once).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { composeFinal, signFinal } from '../src/pdf/finalize-document.ts';
import { createSigner } from '../src/pdf/sign/signer.ts';
import { makePdf } from '../test/helpers/pdf.ts';
import { sampleApprovers, sampleInput } from '../test/helpers/sample-input.ts';
import { perUnit } from './process-cpu.ts';
import { formatThreadCpu, threadCoreSeconds } from './thread-cpu.ts';

const { values: args } = parseArgs({ options: { documents: { type: 'string', default: '200' } } });
const DOCUMENTS = Number(args.documents);
if (!Number.isInteger(DOCUMENTS) || DOCUMENTS < 2) throw new Error('--documents takes a whole number from 2');

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function main() {
  const devCertDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-finalize-one-'));
  const signer = await createSigner({ devCertDir, production: false });
  const original = await makePdf(1, 'Bench');
  // As the benchmark's approvers act: sign with a typed name on the page, approve and review by button.
  const [typed, approve, review] = [3, 2, 5].map((i) => sampleApprovers(6)[i]!);
  const approvers = [
    typed!,
    { ...approve!, actionType: 'approve_only' as const },
    { ...review!, channel: 'whatsapp' as const },
  ];
  const input = sampleInput(original, signer, approvers);
  const { signer: _, ...rest } = input;
  const identity = { certificate: signer.certificate, chain: signer.chain, subject: signer.subject };
  const once = async () => {
    const a = cpuMs();
    const composed = await composeFinal({ ...rest, signer: identity });
    const b = cpuMs();
    await signFinal(composed, input);
    return { compose: b - a, sign: cpuMs() - b };
  };
  const first = await once();
  const threads0 = await threadCoreSeconds(process.pid);
  let compose = 0;
  let sign = 0;
  for (let i = 1; i < DOCUMENTS; i++) {
    const one = await once();
    compose += one.compose;
    sign += one.sign;
  }
  const n = DOCUMENTS - 1;
  // Core-seconds per thousandth of the documents: ms per document.
  const threads = perUnit(threads0, await threadCoreSeconds(process.pid), n / 1000);
  console.log(
    `finalizing the lifecycle benchmark's document, ${n} times after a first (load average ${os.loadavg()[0]!.toFixed(2)}):`,
  );
  console.log(`  first: compose ${first.compose.toFixed(1)} ms, sign ${first.sign.toFixed(1)} ms of CPU`);
  console.log(
    `  each after: compose ${(compose / n).toFixed(2)} ms, sign ${(sign / n).toFixed(2)} ms of CPU`,
  );
  console.log(`  by thread, ms per document: ${formatThreadCpu(threads)}`);
  await rm(devCertDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
