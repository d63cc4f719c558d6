import { execFile as execFileCb } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const execFile = promisify(execFileCb);
const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The reference validators the PAdES tests check our files with: the EU's DSS (tools/dss-validator, a small Java
 * front end built once per machine by scripts/ensure-dss-validator.sh) and pyHanko's CLI (pip, pinned in .ci/run).
 */

export interface DssSignature {
  id: string;
  indication: string;
  subIndication: string | null;
  /** PAdES-BASELINE-B, -T, -LT, -LTA. */
  format: string;
  errors: string[];
  warnings: string[];
  timestamps: {
    id: string;
    indication: string;
    subIndication: string | null;
    productionTime: string | null;
  }[];
}

export interface DssResult {
  file: string;
  offline: boolean;
  signatures: DssSignature[];
}

let jar: Promise<string> | undefined;

/** The validator's jar, built first if this machine has none (Maven; minutes the first time). */
export function dssValidatorJar(): Promise<string> {
  jar ??= execFile('bash', [path.join(ROOT, 'scripts/ensure-dss-validator.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  }).then(({ stdout }) => stdout.trim().split('\n').at(-1)!);
  return jar;
}

/**
 * Validates files with DSS in one JVM (its start-up is the slow part), the test root trusted. Each file is
 * validated online (OCSP, CRL and AIA sources on) or offline (none: the file must carry its validation data).
 */
export async function dssValidate(
  trustedRoot: string,
  files: { path: string; offline: boolean }[],
): Promise<DssResult[]> {
  const args = ['-jar', await dssValidatorJar(), '--trust', trustedRoot];
  if (process.env.DSS_REPORTS_DIR) args.push('--reports', process.env.DSS_REPORTS_DIR);
  for (const f of files) args.push(f.offline ? '--offline' : '--online', f.path);
  const { stdout } = await execFile('java', args, { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as DssResult);
}

let pyhankoPath: Promise<string> | undefined;
/** PYHANKO_BIN, else the pyhanko script pip installed beside this python3 (as .ci/run does), else PATH's. */
function pyhanko(): Promise<string> {
  pyhankoPath ??= process.env.PYHANKO_BIN
    ? Promise.resolve(process.env.PYHANKO_BIN)
    : execFile('python3', ['-c', 'import sysconfig; print(sysconfig.get_path("scripts"))']).then(
        ({ stdout }) => {
          const beside = path.join(stdout.trim(), 'pyhanko');
          return existsSync(beside) ? beside : 'pyhanko';
        },
      );
  return pyhankoPath;
}

export interface PyhankoResult {
  /** Exit code 0 and every signature field VALID in the executive summary. */
  valid: boolean;
  output: string;
}

/**
 * pyHanko's judgement of a file's signatures, the test root the only trust anchor: `sign validate` (current
 * validation, revocation fetched online where the file has none) or `sign adesverify` (ETSI EN 319 102-1 AdES
 * validation with past-signature validation from the file's own validation data: the long-term check).
 */
export async function pyhankoValidate(
  trustedRoot: string,
  file: string,
  mode: 'validate' | 'adesverify',
): Promise<PyhankoResult> {
  const args = ['sign', mode, '--trust', trustedRoot, '--trust-replace', '--executive-summary', file];
  const r = await execFile(await pyhanko(), args, { timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      code: err.code ?? 1,
      output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    }),
  );
  // The executive summary: one `field:certificate SHA-256:VERDICT` line per signature.
  const summary = r.output.split('\n').filter((l) => /^[^:]+:[0-9a-f]{64}:[A-Z_]+$/.test(l.trim()));
  return {
    valid: r.code === 0 && summary.length > 0 && summary.every((l) => l.trim().endsWith(':VALID')),
    output: r.output,
  };
}
