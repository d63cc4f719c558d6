import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { npmStart } from '../helpers/npm-start.ts';
import { pageCount, pageText, pdfsig } from '../helpers/pdf-tools.ts';
import { freePort } from '../setup/free-port.ts';
import { seedPageAssets } from '../setup/page-assets-seed.ts';

/**
 * The README's walk-through is examples/quickstart.sh; this runs it as a newcomer would, against `npm start` on a
 * scratch DATA_DIR, and checks what it downloaded independently of the script's own checks.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'examples', 'quickstart.sh');

function runScript(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | string; output: string; stderr: string }> {
  const child = spawn('bash', [SCRIPT], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
    stderr += d.toString();
  });
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code: code ?? signal ?? 'unknown', output, stderr })),
  );
}

let scratch: string;
let app: Awaited<ReturnType<typeof npmStart>> | undefined;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-quickstart-'));
  await chmod(scratch, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
});
afterAll(async () => {
  if (app && app.child.exitCode === null) {
    app.child.kill('SIGTERM');
    await app.exited;
  }
  await rm(scratch, { recursive: true, force: true });
});

describe('examples/quickstart.sh', () => {
  it('fails loudly, naming the address, when nothing answers there', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await runScript({ ...process.env, WATHIQ_URL: url, QUICKSTART_OUT_DIR: scratch });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`quickstart: FAILED: GET ${url}/api/v1/health: no answer`);
  });

  it('takes a document from upload to a signed download against npm start', async () => {
    // The page assets' compressed forms, as a developer's DATA_DIR holds them after a first start: this test is the
    // quick start, not the first start (test/runtime/npm-start.test.ts), so its API spends no 20 s of brotli beside it.
    await seedPageAssets(inject('pageAssetCache'), path.join(scratch, 'data'));
    app = await npmStart(path.join(scratch, 'data'));
    const outDir = path.join(scratch, 'out');
    const run = await runScript({
      ...app.env,
      WATHIQ_URL: `http://127.0.0.1:${app.port}`,
      QUICKSTART_OUT_DIR: outDir,
    });
    expect(run.code, run.output).toBe(0);
    for (const step of ['== 1.', '== 2.', '== 3.', '== 4.', '== 5.', '== 6.', '== 7.', '== Done'])
      expect(run.output, `the script prints step ${step}`).toContain(step);
    expect(run.output).toContain('reply accepted');

    // The signed file, checked here rather than trusting the script's word.
    const files = await readdir(outDir);
    expect(files).toEqual([expect.stringMatching(/^WQT-\d{4}-000001\.pdf$/)]);
    const file = path.join(outDir, files[0]!);
    const { signatures, output } = pdfsig(file);
    expect(signatures, output).toHaveLength(1);
    expect(signatures[0]!.valid, output).toBe(true);
    expect(signatures[0]!.total, output).toBe(true);
    // The contract's two pages come first, then the signatures page and the audit certificate.
    expect(pageCount(file)).toBeGreaterThanOrEqual(4);
    expect(pageText(file, 1)).toContain('Equipment supply contract');
    expect(pageText(file, 3)).toContain('Sara Almutairi');

    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
  }, 600_000);
});
