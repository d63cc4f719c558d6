import { appendFile, cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { valueImports, workflowBuildId } from '../../src/temporal/workflow-build-id.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A checkout of this tree's sources at another path, with the same packages. */
async function checkout(parent: string, name: string): Promise<string> {
  const dir = path.join(parent, name, 'deeper', 'wathiq');
  await cp(path.join(ROOT, 'src'), path.join(dir, 'src'), { recursive: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}
const idOf = (dir: string) => workflowBuildId(path.join(dir, 'src/workflows/index.ts'));

describe('the worker build id (its Worker Deployment Version)', () => {
  let tmp: string;
  let here: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'wathiq-build-id-'));
    here = await workflowBuildId(workflowsPath());
  });
  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it('is the same for the same code in two checkouts at other paths', async () => {
    const [a, b] = await Promise.all([checkout(tmp, 'a'), checkout(tmp, 'somewhere-else')]);
    expect(here).toMatch(/^wf-[0-9a-f]{20}$/);
    expect(await idOf(a)).toBe(here);
    expect(await idOf(b)).toBe(here);
  });

  it('keeps its value for a change outside the workflows, and for a type the workflows only import as a type', async () => {
    const dir = await checkout(tmp, 'elsewhere');
    await appendFile(path.join(dir, 'src/api/app.ts'), '\nexport const changed = 1;\n');
    await appendFile(path.join(dir, 'src/features/approval/activities/notify.ts'), '\n// a comment\n');
    // The approval state imports the domain's types only: the bundler drops such an import.
    await appendFile(path.join(dir, 'src/domain/model.ts'), '\nexport type Unused = string;\n');
    expect(await idOf(dir)).toBe(here);
  });

  it('changes with any file the workflows run, however deep, and with line endings only normalised', async () => {
    const deep = await checkout(tmp, 'deep');
    await appendFile(path.join(deep, 'src/features/approval/rules.ts'), '\nexport const more = 1;\n');
    const legacy = await checkout(tmp, 'legacy');
    await appendFile(path.join(legacy, 'src/features/approval/workflow/legacy/rules.ts'), '\n// x\n');
    const webhooks = await checkout(tmp, 'webhooks');
    await appendFile(path.join(webhooks, 'src/features/webhooks/workflow/retry-schedule.ts'), '\n// x\n');
    const ids = await Promise.all([idOf(deep), idOf(legacy), idOf(webhooks)]);
    for (const id of ids) expect(id).not.toBe(here);
    expect(new Set(ids).size).toBe(3);

    const crlf = await checkout(tmp, 'crlf');
    const file = path.join(crlf, 'src/features/approval/workflow/document-approval.ts');
    const { readFile } = await import('node:fs/promises');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/\n/g, '\r\n'));
    expect(await idOf(crlf)).toBe(here);
  });

  it('follows value imports and re-exports, not type-only ones', () => {
    const source = [
      "import { a, type B } from './a.ts';",
      "import type { C } from './c.ts';",
      "import { type D, type E } from './d.ts';",
      "export { f } from './f.ts';",
      "export type { G } from './g.ts';",
      "export * from './h.ts';",
      "import './side-effect.ts';",
      'import * as ns from "@temporalio/workflow";',
      "import {\n  x,\n  y,\n} from '../multi/line.ts';",
    ].join('\n');
    expect(valueImports(source).sort()).toEqual(
      ['./a.ts', './f.ts', './h.ts', './side-effect.ts', '@temporalio/workflow', '../multi/line.ts'].sort(),
    );
  });

  it('refuses a workflow import it cannot find, naming it', async () => {
    const dir = await checkout(tmp, 'broken');
    await writeFile(
      path.join(dir, 'src/workflows/index.ts'),
      "export { gone } from '../features/approval/workflow/gone.ts';\n",
    );
    await expect(idOf(dir)).rejects.toThrow(/gone\.ts.*is not there/);
  });
});
