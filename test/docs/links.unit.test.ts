import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README is a doorway into docs/: every relative link in it, in docs/*.md and in bench/README.md must lead to a
 * file that exists and, when it names a heading (`file.md#heading`), to a heading of that file, slugged as GitHub
 * slugs it. Links in code blocks and code spans are text, not links; absolute URLs are not checked.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

const GUIDES = [
  'README.md',
  'bench/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(path.join(ROOT, 'docs/ar'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/ar/${f}`),
];

/** The text outside fenced code blocks and code spans, line numbers kept. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** GitHub's anchor for a heading: lowercased, punctuation and symbols dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers, a repeated heading numbered as GitHub numbers it (`-1`, `-2`, …). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  guide: string;
  line: number;
  target: string;
}

function relativeLinks(guide: string): Link[] {
  const links: Link[] = [];
  prose(readFileSync(path.join(ROOT, guide), 'utf8')).forEach((text, i) => {
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      links.push({ guide, line: i + 1, target });
    }
  });
  return links;
}

/** Why a link is broken, or null when it leads somewhere. */
function brokenBecause(link: Link): string | null {
  const [file = '', fragment] = link.target.split('#', 2);
  const resolved = file
    ? path.resolve(ROOT, path.dirname(link.guide), decodeURI(file))
    : path.join(ROOT, link.guide);
  const relative = path.relative(ROOT, resolved);
  if (!existsSync(resolved)) return `${relative} does not exist`;
  if (fragment === undefined) return null;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md'))
    return `${relative} is not a Markdown file`;
  return anchors(resolved).has(decodeURIComponent(fragment))
    ? null
    : `${relative} has no heading #${fragment}`;
}

describe('links in the README and docs/', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('An HSM (`SIGNER=pkcs11`)')).toBe('an-hsm-signerpkcs11');
    expect(slug('How Wathiq delivers (for operators)')).toBe('how-wathiq-delivers-for-operators');
    expect(slug('§1 Envelopes, ids, pagination, times')).toBe('1-envelopes-ids-pagination-times');
    expect(slug('Archive renewal (B-LTA)')).toBe('archive-renewal-b-lta');
  });

  it('finds every broken kind of link (so the check below can fail)', () => {
    const probe = (target: string) => brokenBecause({ guide: 'README.md', line: 1, target });
    expect(probe('docs/no-such-guide.md')).toBe('docs/no-such-guide.md does not exist');
    expect(probe('docs/api.md#no-such-heading')).toBe('docs/api.md has no heading #no-such-heading');
    expect(probe('examples/contract.pdf#page-2')).toBe('examples/contract.pdf is not a Markdown file');
    expect(probe('docs/api.md#idempotency')).toBeNull();
  });

  it('every relative link leads to an existing file and heading', () => {
    const links = GUIDES.flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(50);
    const broken = links.flatMap((link) => {
      const why = brokenBecause(link);
      return why ? [`${link.guide}:${link.line} (${link.target}): ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });
});
