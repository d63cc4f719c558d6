import type { z } from 'zod';
import type { ConfigSlice } from './slice.ts';

/** What the reference reads of a slice: its words and variables, never its checks or build. */
export type SliceReference = Pick<ConfigSlice, 'title' | 'about' | 'env' | 'derivedDefaults'>;

/** One variable as the reference shows it. */
export interface VariableReference {
  name: string;
  /** The default as a value (what .env.example sets), when the schema has a fixed one. */
  value?: string;
  /** The default as the table shows it: the fixed value, or the slice's words for a worked-out one. */
  shownDefault?: string;
  description: string;
}

/** The fixed default of a schema (its outermost `.default(…)`), if any. */
function fixedDefault(schema: z.ZodType): string | undefined {
  const def = schema._zod.def as { type: string; defaultValue?: unknown };
  return def.type === 'default' ? String(def.defaultValue) : undefined;
}

export function variablesOf(slice: SliceReference): VariableReference[] {
  return Object.entries(slice.env).map(([name, schema]) => {
    const value = fixedDefault(schema as z.ZodType);
    const derived = slice.derivedDefaults?.[name];
    return {
      name,
      ...(value !== undefined && { value }),
      ...((derived ?? value) !== undefined && { shownDefault: derived ?? value }),
      description: (schema as z.ZodType).description ?? '',
    };
  });
}

const MARKDOWN_INTRO = `# Configuration

Configuration is read from the environment once, at start, and validated; a malformed value stops start-up with
the variable's name. [\`.env.example\`](../.env.example) lists every variable with its explanation, and
[\`.env.production.example\`](../.env.production.example) is the starting point of a production \`.env\`
([operations.md](operations.md#docker-compose)). Tokens and secrets are kept hashed or sealed with
\`ENCRYPTION_KEYS\` (required in production): how, and how to rotate the key (\`npm run cli -- secrets:reseal\`), in
[security.md](security.md#secrets-at-rest). The variables that set a limit on what clients may send are in the
limits table of [api.md](api.md#limits); what the logs carry is in [operations.md](operations.md#logs).

With \`NODE_ENV=production\` start-up also refuses, naming the variable: a \`PUBLIC_BASE_URL\` that is not https,
\`WEBHOOK_ALLOW_PRIVATE=true\`, \`WHATSAPP_PROVIDER=console\`, an empty \`WHATSAPP_APP_SECRET\`, an unset
\`ENCRYPTION_KEYS\`, and (for the worker and \`npm start\`) an unset \`SIGNING_P12_PATH\` or the development
certificate, and a \`SIGNING_CSC_URL\` that is not https. When \`PUBLIC_BASE_URL\` is https every response carries
\`Strict-Transport-Security: max-age=31536000; includeSubDomains\`.

This reference and \`.env.example\` are generated from the configuration's slices in \`src/config/\`, where each
area's variables, defaults and checks are written (\`npm run docs:config\`); a unit test fails when either is stale.
`;

/** Text for a Markdown table cell: a pipe would end the cell, an angle bracket open an HTML tag. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;');

/** docs/configuration.md before Prettier: the introduction, then a table per slice. */
export function renderConfigurationMarkdown(slices: readonly SliceReference[]): string {
  const sections = slices.map((slice) => {
    const rows = variablesOf(slice).map(
      (v) =>
        `| \`${v.name}\` | ${v.shownDefault === undefined ? '' : v.value === undefined ? cell(v.shownDefault) : `\`${cell(v.shownDefault)}\``} | ${cell(v.description)} |`,
    );
    return [
      `## ${slice.title}`,
      ...(slice.about ? ['', cell(slice.about)] : []),
      '',
      '| variable | default | meaning |',
      '| --- | --- | --- |',
      ...rows,
    ].join('\n');
  });
  return `${MARKDOWN_INTRO}\n${sections.join('\n\n')}\n`;
}

const ENV_WIDTH = 118;
const VALUE_COLUMN = 37;

/** Words of `text` in lines that fit `width` after `prefix`. */
function wrap(text: string, prefix: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && prefix.length + line.length + 1 + word.length > width) {
      lines.push(prefix + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(prefix + line);
  return lines;
}

/** .env.example: each slice's variables with their fixed defaults, each explained beside it. */
export function renderEnvExample(slices: readonly SliceReference[]): string {
  const head = [
    '# Wathiq configuration. Every variable is optional: with none set, `npm start` runs everything embedded.',
    '# Copy to .env for your own notes; Wathiq reads the process environment (use your process manager to load it).',
    '# Generated from src/config/ by `npm run docs:config` (docs/configuration.md has the same reference as tables).',
  ];
  const sections = slices.map((slice) => {
    const lines = [`# --- ${slice.title} ---`, ...(slice.about ? wrap(slice.about, '# ', ENV_WIDTH) : [])];
    for (const v of variablesOf(slice)) {
      const assignment = `${v.name}=${v.value ?? ''}`;
      const pad = ' '.repeat(Math.max(1, VALUE_COLUMN - assignment.length));
      const explained =
        v.value === undefined && v.shownDefault
          ? `${v.description} (unset: ${v.shownDefault})`
          : v.description;
      const [first = '', ...rest] = wrap(
        explained,
        '',
        ENV_WIDTH - Math.max(VALUE_COLUMN, assignment.length + 1) - 2,
      );
      lines.push(`${assignment}${pad}# ${first}`);
      for (const more of rest) lines.push(`${' '.repeat(VALUE_COLUMN)}# ${more}`);
    }
    return lines.join('\n');
  });
  return `${head.join('\n')}\n\n${sections.join('\n\n')}\n`;
}
