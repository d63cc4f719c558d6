import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { CONFIG_SLICES, loadConfig } from '../../src/config.ts';
import { renderEnvExample, variablesOf } from '../../src/config/reference.ts';
import { configReference, REFERENCE_FILES } from '../../scripts/docs-config.ts';

/**
 * docs/configuration.md and .env.example are generated from the configuration's slices (src/config/): they say
 * what the code reads, or this fails and `npm run docs:config` writes them again.
 */
describe('the configuration reference', () => {
  it('docs/configuration.md and .env.example are what `npm run docs:config` writes', async () => {
    const expected = await configReference();
    expect(
      await readFile(REFERENCE_FILES.markdown, 'utf8'),
      'docs/configuration.md: run npm run docs:config',
    ).toBe(expected.markdown);
    expect(await readFile(REFERENCE_FILES.envExample, 'utf8'), '.env.example: run npm run docs:config').toBe(
      expected.envExample,
    );
  });

  it('describes every variable, once, in one slice', () => {
    const names = CONFIG_SLICES.flatMap((slice) => Object.keys(slice.env));
    expect(names.length).toBeGreaterThan(100);
    expect(new Set(names).size, 'a variable declared by two slices').toBe(names.length);
    for (const slice of CONFIG_SLICES) {
      for (const [name, schema] of Object.entries(slice.env)) {
        expect((schema as z.ZodType).description?.trim(), `${name} has no .describe() text`).toBeTruthy();
      }
    }
  });

  it('shows each fixed default as the value .env.example sets, and that value loads as the default does', () => {
    const example = renderEnvExample(CONFIG_SLICES);
    const fromExample: Record<string, string> = {};
    for (const slice of CONFIG_SLICES) {
      for (const v of variablesOf(slice)) {
        const line = example.split('\n').find((l) => l.startsWith(`${v.name}=`));
        expect(line, v.name).toBeDefined();
        const value = line!
          .slice(v.name.length + 1)
          .split(/\s+#/)[0]!
          .trim();
        expect(value, v.name).toBe(v.value ?? '');
        fromExample[v.name] = value;
      }
    }
    // Copying .env.example as it is changes nothing: every value it sets is the default.
    expect(loadConfig(fromExample)).toEqual(loadConfig({}));
  });
});
