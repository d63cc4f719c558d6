/**
 * Benchmark of the final-PDF finalization: `npx tsx bench/finalize.ts` (or `npm run bench:finalize`).
 *
 * A 20 MB PDF (scanned-looking pages: large image streams plus text) is finalized with 10 and with 50 approvers.
 * Each case runs in its own child process so its peak RSS is its own; the baselines are measured in the same
 * run: reading the file plus SHA-256 over it, and a bare pdf-lib load + save. Targets: finalization within 3×
 * the bare pdf-lib load + save, and under 250 MB peak RSS.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { finalizeDocument } from '../src/pdf/finalize-document.ts';
import { createSigner } from '../src/pdf/sign/signer.ts';
import { sampleApprovers, sampleInput } from '../test/helpers/sample-input.ts';

const TARGET_BYTES = 20 * 1024 * 1024;
const RUNS = 3;

type Case = 'read-sha256' | 'pdflib-load-save' | 'finalize-10' | 'finalize-50';

interface ChildResult {
  case: Case;
  medianMs: number;
  peakRssMb: number;
  /** RSS once the modules are loaded and warmed up, before the measured runs. */
  baselineRssMb: number;
  outputBytes?: number;
}

/** Deterministic bytes that do not compress, like photographed pages. */
function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

async function makeInput(file: string): Promise<void> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const side = 600;
  const imageBytes = side * side * 3;
  const pages = Math.ceil(TARGET_BYTES / imageBytes);
  for (let i = 0; i < pages; i++) {
    const image = doc.context.register(
      doc.context.stream(noise(imageBytes, i + 1), {
        Type: 'XObject',
        Subtype: 'Image',
        Width: side,
        Height: side,
        ColorSpace: 'DeviceRGB',
        BitsPerComponent: 8,
      }),
    );
    const page = doc.addPage([595.28, 841.89]);
    page.node.setXObject(PDFName.of('Scan'), image);
    page.pushOperators();
    page.drawText(`Scanned page ${i + 1} of ${pages}`, { x: 40, y: 800, size: 14, font });
    const content = doc.context.register(doc.context.flateStream('q 515 0 0 515 40 200 cm /Scan Do Q'));
    page.node.addContentStream(content);
  }
  await writeFile(file, await doc.save({ useObjectStreams: false }));
}

async function runCase(which: Case, file: string, devCertDir: string): Promise<ChildResult> {
  const signer = await createSigner({ devCertDir, production: false });
  const once = async (): Promise<number | undefined> => {
    if (which === 'read-sha256') {
      const bytes = await readFile(file);
      createHash('sha256').update(bytes).digest('hex');
      return undefined;
    }
    if (which === 'pdflib-load-save') {
      const doc = await PDFDocument.load(await readFile(file), { updateMetadata: false });
      return (await doc.save()).length;
    }
    const original = await readFile(file);
    const approvers = sampleApprovers(which === 'finalize-10' ? 10 : 50);
    return (await finalizeDocument(sampleInput(original, signer, approvers))).pdf.length;
  };
  // Warm up on a small document: fonts, WebAssembly and JIT are not what is being measured.
  if (which.startsWith('finalize')) {
    const small = await PDFDocument.create();
    small.addPage();
    const bytes = await small.save();
    await finalizeDocument(sampleInput(bytes, signer, sampleApprovers(2)));
  }
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const baselineRssMb = process.memoryUsage().rss / 1024 / 1024;
  const times: number[] = [];
  let outputBytes: number | undefined;
  for (let i = 0; i < RUNS; i++) {
    gc?.();
    const start = process.hrtime.bigint();
    outputBytes = await once();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return {
    case: which,
    medianMs: times[Math.floor(times.length / 2)] as number,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    baselineRssMb,
    outputBytes,
  };
}

async function main(): Promise<void> {
  const [, , flag, which, file, devCertDir] = process.argv;
  if (flag === '--child' && which && file && devCertDir) {
    process.stdout.write(JSON.stringify(await runCase(which as Case, file, devCertDir)));
    return;
  }

  const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bench-'));
  try {
    const file = path.join(dir, 'input.pdf');
    await makeInput(file);
    const size = (await readFile(file)).length;
    const self = fileURLToPath(import.meta.url);
    const results = new Map<Case, ChildResult>();
    for (const c of ['read-sha256', 'pdflib-load-save', 'finalize-10', 'finalize-50'] as Case[]) {
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', self, '--child', c, file, path.join(dir, 'dev-cert')],
        {
          encoding: 'utf8',
          maxBuffer: 1 << 20,
        },
      );
      results.set(c, JSON.parse(out) as ChildResult);
    }
    const base = results.get('pdflib-load-save') as ChildResult;
    const read = results.get('read-sha256') as ChildResult;
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    console.log(
      `input: ${mb(size)} MB, ${RUNS} runs per case, median time; peak RSS of the case's own process\n`,
    );
    console.log(
      'case                 time ms   × load+save   × read+sha   peak RSS MB   RSS before MB   growth MB',
    );
    for (const r of results.values()) {
      console.log(
        [
          r.case.padEnd(18),
          r.medianMs.toFixed(0).padStart(9),
          (r.medianMs / base.medianMs).toFixed(2).padStart(13),
          (r.medianMs / read.medianMs).toFixed(1).padStart(12),
          r.peakRssMb.toFixed(0).padStart(13),
          r.baselineRssMb.toFixed(0).padStart(15),
          (r.peakRssMb - r.baselineRssMb).toFixed(0).padStart(11),
        ].join(' '),
      );
    }
    const verdicts = (['finalize-10', 'finalize-50'] as Case[]).map((c) => {
      const r = results.get(c) as ChildResult;
      const ok = r.medianMs <= 3 * base.medianMs && r.peakRssMb < 250;
      return `${c}: ${ok ? 'within' : 'OUTSIDE'} target (≤ 3× load+save, < 250 MB)`;
    });
    console.log(`\n${verdicts.join('\n')}`);
    console.log(
      '\nRSS before: the process with Node, tsx (about 50 MB of it) and the modules loaded; growth: what the case adds.',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
