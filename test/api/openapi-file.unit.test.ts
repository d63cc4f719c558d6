import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, formatOpenApiFile } from '../../src/api/openapi-document.ts';

const COMMITTED = new URL('../../openapi.json', import.meta.url);

describe('the committed openapi.json', () => {
  it('is what the code builds (npm run openapi:write rewrites it)', async () => {
    const built = formatOpenApiFile(await buildOpenApiDocument());
    const committed = await readFile(COMMITTED, 'utf8');
    // A plain equality would print two 270 kB strings; the first differing line says what went stale.
    const builtLines = built.split('\n');
    const committedLines = committed.split('\n');
    const at = builtLines.findIndex((line, i) => line !== committedLines[i]);
    const stale =
      at === -1 && builtLines.length === committedLines.length
        ? undefined
        : `openapi.json is stale at line ${at + 1}: committed ${JSON.stringify(committedLines[at])}, built ${JSON.stringify(builtLines[at])}; run npm run openapi:write`;
    expect(stale).toBeUndefined();
  });

  it('names a relative server, so it holds no deployment setting', async () => {
    const built = (await buildOpenApiDocument()) as { servers: { url: string }[] };
    expect(built.servers).toEqual([{ url: '/api/v1' }]);
  });
});
