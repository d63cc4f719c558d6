import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One Node.js line everywhere: .nvmrc names the major a developer's version manager picks, the Dockerfile's images
 * and the Node CI installs are of that major, and the oldest line CI also runs is the one package.json's engines
 * starts at.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');

/** A `NAME=1.2.3` assignment in .ci/run. */
async function ciVersion(name: string): Promise<string> {
  const match = new RegExp(`^${name}=(\\d+\\.\\d+\\.\\d+)$`, 'm').exec(await read('.ci/run'));
  expect(match, `.ci/run sets ${name}`).not.toBeNull();
  return match![1]!;
}

describe('the Node.js version', () => {
  it('is the same major in .nvmrc, every Dockerfile stage and CI', async () => {
    const major = (await read('.nvmrc')).trim();
    expect(major).toMatch(/^\d+$/);
    const images = [...(await read('Dockerfile')).matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(images).toHaveLength(2);
    // Debian (glibc): Temporal's core bridge ships no musl build, so not an Alpine image.
    for (const image of images) expect(image).toMatch(new RegExp(`^node:${major}-(bookworm|trixie)-slim$`));
    expect((await ciVersion('NODE_VERSION')).split('.')[0]).toBe(major);
  });

  it("CI's oldest line is where package.json's engines starts", async () => {
    const oldest = await ciVersion('NODE_OLDEST_VERSION');
    const manifest = JSON.parse(await read('package.json')) as { engines: { node: string } };
    const [first] = manifest.engines.node.split('||').map((range) => range.trim());
    expect(first).toMatch(new RegExp(`^\\^${oldest.split('.')[0]}\\.\\d+\\.\\d+$`));
  });
});
