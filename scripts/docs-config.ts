/**
 * `npm run docs:config`: writes docs/configuration.md and .env.example from the configuration's slices
 * (src/config/). test/docs/configuration-reference.unit.test.ts fails when either file differs from what this writes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { CONFIG_SLICES } from '../src/config.ts';
import { renderConfigurationMarkdown, renderEnvExample } from '../src/config/reference.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const REFERENCE_FILES = {
  markdown: path.join(ROOT, 'docs', 'configuration.md'),
  envExample: path.join(ROOT, '.env.example'),
};

/** The two files as they should be: the Markdown formatted as `npm run lint` wants it. */
export async function configReference(): Promise<{ markdown: string; envExample: string }> {
  const options = (await resolveConfig(REFERENCE_FILES.markdown)) ?? {};
  return {
    markdown: await format(renderConfigurationMarkdown(CONFIG_SLICES), { ...options, parser: 'markdown' }),
    envExample: renderEnvExample(CONFIG_SLICES),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const reference = await configReference();
  for (const [key, file] of Object.entries(REFERENCE_FILES) as [keyof typeof REFERENCE_FILES, string][]) {
    const before = await readFile(file, 'utf8').catch(() => '');
    await writeFile(file, reference[key]);
    process.stdout.write(
      `${path.relative(ROOT, file)}: ${before === reference[key] ? 'unchanged' : 'written'}\n`,
    );
  }
}
