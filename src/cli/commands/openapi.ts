import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { breakingChanges } from '../../api/openapi/breaking-changes.ts';
import type { CliCommand } from '../command.ts';

const readDocument = async (file: string) =>
  JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;

export const openapiCommands: CliCommand[] = [
  {
    words: ['openapi', 'write'],
    aliases: ['openapi:write'],
    synopsis: '[--out FILE]',
    summary: 'Write the OpenAPI document GET /api/v1/openapi.json serves',
    details: 'Writes to FILE (default: openapi.json in the current directory); reaches no service.',
    options: { out: { type: 'string' } },
    positionals: { min: 0, max: 0 },
    async run(ctx, { values }) {
      const out = path.resolve(typeof values.out === 'string' ? values.out : 'openapi.json');
      // Loaded here, not at the top: building the document loads every route and schema of the API, about two
      // thirds of the CPU any other command of the CLI would spend loading modules.
      const { buildOpenApiDocument, formatOpenApiFile } = await import('../../api/openapi-document.ts');
      await writeFile(out, formatOpenApiFile(await buildOpenApiDocument()));
      ctx.io.out(`wrote ${out}\n`);
      return 0;
    },
  },
  {
    words: ['openapi', 'breaking'],
    aliases: ['openapi:breaking'],
    synopsis: '<before.json> [<after.json>]',
    summary: 'List what a new OpenAPI document breaks for clients of an older one',
    details: `Compares after (default: openapi.json) with before: removed operations and success statuses, newly
required request fields and parameters, request enum values dropped, response fields no longer promised. Exits 1
when anything breaks.`,
    options: {},
    positionals: { min: 1, max: 2 },
    async run(ctx, { positionals }) {
      const changes = breakingChanges(
        await readDocument(positionals[0]!),
        await readDocument(positionals[1] ?? 'openapi.json'),
      );
      for (const change of changes) ctx.io.out(`breaking: ${change}\n`);
      if (changes.length === 0) ctx.io.out('no breaking change\n');
      return changes.length > 0 ? 1 : 0;
    },
  },
];
