import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REDOCLY = fileURLToPath(new URL('../../node_modules/.bin/redocly', import.meta.url));

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer?: string }[] }[];
}

describe('redocly lint openapi.json', () => {
  it(
    'finds no error and no warning under the recommended rules (redocly.yaml)',
    { timeout: 60_000 },
    async () => {
      // The exit code says nothing of warnings: the JSON report's totals do.
      const { stdout } = await promisify(execFile)(
        REDOCLY,
        ['lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'],
        {
          cwd: ROOT,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
          maxBuffer: 16 * 1024 * 1024,
        },
      ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(stdout) as LintReport;
      const problems = report.problems.map(
        (p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`,
      );
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    },
  );
});
