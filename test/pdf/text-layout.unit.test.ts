import { describe, expect, it } from 'vitest';
import { loadFontSet } from '../../src/pdf/text/fonts.ts';
import { layoutLine, wrapText } from '../../src/pdf/text/layout.ts';

const fonts = (await loadFontSet()).regular;
const arabicFont = fonts.find((f) => f.arabic);

describe('layoutLine', () => {
  it.each([
    'محمّد عبدالله العتيبي',
    'إلهام الغامدي — لؤي الحربي',
    'شَرِكَة الحُلُول المُتَقَدِّمَة',
    'Ahmed Al-Otaibi · أحمد العتيبي · 2026-01-15',
    'José Müller · Œuvre · Łódź · ١٢٣',
  ])('draws every character of %s with a real glyph (no empty boxes)', (text) => {
    const line = layoutLine(text, fonts, 10);
    const gids = line.runs.flatMap((r) => r.clusters.flatMap((c) => c.glyphs.map((g) => g.gid)));
    expect(gids.length).toBeGreaterThan(0);
    expect(gids).not.toContain(0);
    // Each character is accounted for in the clusters' text, in logical order within each run.
    const chars = line.runs.flatMap((r) => r.clusters.map((c) => c.text)).join('');
    expect([...chars].sort().join('')).toBe([...text.replace(/ /g, ' ')].sort().join(''));
  });

  it('joins letters: lam before alef takes its joining form, not the isolated one', () => {
    const lam = arabicFont?.hbFont.glyph(0x0644);
    const line = layoutLine('لا', fonts, 10, 'rtl');
    const gids = line.runs.flatMap((r) => r.clusters.flatMap((c) => c.glyphs.map((g) => g.gid)));
    expect(lam).toBeDefined();
    expect(gids).not.toContain(lam);
    expect(gids).not.toContain(arabicFont?.hbFont.glyph(0x0627));
  });

  it('lays mixed Arabic, Latin and digits right to left with the Latin run kept whole', () => {
    const line = layoutLine('المدير المالي Finance Manager 2026', fonts, 10);
    expect(line.rtl).toBe(true);
    const visual = line.runs.map((r) => r.clusters.map((c) => c.text).join(''));
    // Left to right on the page: the Latin and digits first (they end the logical line), then the Arabic.
    expect(visual[0]).toContain('Finance Manager 2026');
    // Within the Arabic run, glyphs are in visual order: the first word read is at the right end.
    const arabic = visual.find((v) => /[\u0600-\u06ff]/.test(v)) ?? '';
    expect([...arabic].reverse().join('').trim()).toBe('المدير المالي');
  });

  it('wraps long lines at spaces and inside tokens too long for a line', () => {
    const lines = wrapText(`Mozilla/5.0 ${'x'.repeat(200)} end`, fonts, 8, 200);
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(layoutLine(l, fonts, 8).width).toBeLessThanOrEqual(200);
  });
});
