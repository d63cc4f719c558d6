import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  linkTokenOf,
  messagesTo,
  nthMessageTo,
  requestFor,
  pagePost,
  PHONES,
  quickRepliesOf,
  send,
  statusOf,
  tapButton,
  TINY_PNG,
  type ApproverSpec,
} from '../helpers/approval-flow.ts';
import { chunk, dataUrl, deflatedZeros, ihdr, pngOf, rgba, scanlines } from '../helpers/png.ts';
import { pageText, pdfsig } from '../helpers/pdf-tools.ts';
import {
  type DownloadBody,
  type FinalPdfHarness,
  download,
  fetchPublic,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';

/** POST /a/{token}/complete as the approval page and hand-made clients send it. */
let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness();
});
afterAll(async () => {
  await h.close();
  await rm(h.dataDir, { recursive: true, force: true });
});

const db = () => h.service.database.db;

async function sentTo(approvers: ApproverSpec[]) {
  const since = approvers.map((a) => messagesTo(h, a.phone).length);
  const doc = await createDocument(h, { workflowType: 'sequential', approvers });
  expect((await send(h, doc.id)).status).toBe(200);
  const token = linkTokenOf(await requestFor(h, approvers[0]!.phone, doc.id));
  return { doc, token, since };
}

function complete(token: string, body: unknown, lang?: 'ar' | 'en'): Promise<Response> {
  if (!lang) return pagePost(h, token, 'complete', body);
  return fetch(`${h.service.api.url}/a/${token}/complete?lang=${lang}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function expect422(res: Response, field: string, message: string): Promise<void> {
  expect(res.status).toBe(422);
  expect(await res.json()).toEqual({
    success: false,
    error: {
      code: 422,
      type: 'validation_failed',
      message: 'Validation failed',
      details: { [field]: [message] },
    },
  });
}

const rgbaRows = (w: number, h: number) =>
  scanlines({ width: w, height: h, colorType: 6, bitDepth: 8, samples: (x, y) => [x, y, 0, 255] });

/** The hostile and broken images of the issue, each as a data URL. */
async function brokenImages(): Promise<Record<string, string>> {
  const good = rgba(40, 16);
  const badCrc = Buffer.from(good);
  const at = badCrc.indexOf('IDAT') + 8;
  badCrc[at] = (badCrc[at] as number) ^ 0xff;
  const rows = rgbaRows(40, 16);
  const filter5 = Buffer.from(rows);
  filter5[0] = 5;
  const idat = chunk('IDAT', zlib.deflateSync(rows));
  return {
    bomb: dataUrl(pngOf(ihdr(1, 1), chunk('IDAT', await deflatedZeros(300 * 1024 * 1024)), chunk('IEND'))),
    'bad CRC': dataUrl(badCrc),
    'good CRC, wrong inflate length': dataUrl(
      pngOf(ihdr(40, 16), chunk('IDAT', zlib.deflateSync(rows.subarray(0, rows.length - 41))), chunk('IEND')),
    ),
    'filter type 5': dataUrl(pngOf(ihdr(40, 16), chunk('IDAT', zlib.deflateSync(filter5)), chunk('IEND'))),
    'two IHDRs': dataUrl(pngOf(ihdr(40, 16), ihdr(40, 16), idat, chunk('IEND'))),
    'IHDR not first': dataUrl(pngOf(chunk('tEXt', Buffer.from('a\0b')), ihdr(40, 16), idat, chunk('IEND'))),
    truncated: dataUrl(good.subarray(0, good.length - 30)),
    'trailing garbage': dataUrl(Buffer.concat([good, Buffer.from('trailing garbage')])),
  };
}

describe('POST /a/{token}/complete refuses broken images in the page’s language', () => {
  // It waits up to a minute for finalization (the file's first, on a cold PDF worker pool): the test allows it.
  it(
    'Arabic: every broken signature is 422 and stores nothing; the document stays open, and a good one finishes it',
    { timeout: 120_000 },
    async () => {
      const { doc, token } = await sentTo([
        { name: 'سارة المطيري', phone: PHONES.saudiA, action_type: 'sign' },
      ]);
      const damaged = 'صورة التوقيع تالفة؛ ارسمه مرة أخرى.';
      for (const [name, image] of Object.entries(await brokenImages())) {
        const res = await complete(token, { signature_png: image });
        expect(res.status, name).toBe(422);
        expect(((await res.json()) as { error: { details: unknown } }).error.details, name).toEqual({
          signature_png: [damaged],
        });
      }
      const tooLarge = pngOf(
        ihdr(4097, 1),
        chunk('IDAT', zlib.deflateSync(Buffer.alloc(4097 * 4 + 1))),
        chunk('IEND'),
      );
      await expect422(
        await complete(token, { signature_png: dataUrl(tooLarge) }),
        'signature_png',
        'صورة التوقيع كبيرة جدًا (الحد الأقصى 4096 × 4096 بكسل)؛ ارسمه مرة أخرى.',
      );
      await expect422(
        await complete(token, { signature_png: 'data:image/jpeg;base64,/9j/4AAQ' }),
        'signature_png',
        'يجب أن يكون التوقيع صورة PNG؛ ارسمه مرة أخرى.',
      );

      // Nothing was recorded or stored; the approver can still act.
      const status = await statusOf(h, doc.id);
      expect(status.status).toBe('pending');
      expect(status.approvers[0]).toMatchObject({ status: 'notified', acted_at: null });
      const row = await db()('approvers')
        .where({ id: doc.approvers[0]!.id })
        .first<{ signature_key: string | null }>();
      expect(row.signature_key).toBeNull();
      expect(
        await db()('document_events').where({ document_id: doc.id, event: 'approver.completed' }),
      ).toHaveLength(0);

      // A good drawing now goes through, and the document is finalized.
      expect((await complete(token, { signature_png: TINY_PNG })).status).toBe(200);
      await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);
      const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;
      const file = path.join(h.dataDir, `${doc.id}.pdf`);
      await writeFile(file, Buffer.from(await (await fetchPublic(h, data.download_url)).arrayBuffer()));
      expect(pdfsig(file, h.pki.nssDir).signatures[0]).toMatchObject({ valid: true, total: true });
    },
  );

  it('English for an English-speaking approver, and for anyone whose page is in English (?lang=en)', async () => {
    const { token } = await sentTo([{ name: 'Lina Signer', phone: PHONES.uk, action_type: 'sign' }]);
    const { bomb } = await brokenImages();
    await expect422(
      await complete(token, { signature_png: bomb }),
      'signature_png',
      'The signature image is damaged; draw it again.',
    );
    const tooLarge = pngOf(ihdr(1, 4097), chunk('IDAT', Buffer.from('never inflated')), chunk('IEND'));
    await expect422(
      await complete(token, { signature_png: dataUrl(tooLarge) }),
      'signature_png',
      'The signature image is too large (at most 4096 × 4096 pixels); draw it again.',
    );

    const saudi = await sentTo([{ name: 'Omar Signer', phone: PHONES.saudiB, action_type: 'sign' }]);
    await expect422(
      await complete(saudi.token, { signature_png: bomb }, 'en'),
      'signature_png',
      'The signature image is damaged; draw it again.',
    );
  });

  it('a broken stamp image is 422 with the stamp’s wording, and the approver can still stamp', async () => {
    const { doc, token } = await sentTo([{ name: 'ختم', phone: PHONES.saudiC, action_type: 'stamp' }]);
    const { 'bad CRC': badCrc } = await brokenImages();
    await expect422(
      await complete(token, { stamp_png: badCrc }),
      'stamp_png',
      'صورة الختم تالفة؛ اخترها مرة أخرى أو استخدم الختم المُنشأ.',
    );
    await expect422(
      await complete(token, { stamp_png: badCrc }, 'en'),
      'stamp_png',
      'The stamp image is damaged; choose it again or use the generated seal.',
    );
    expect((await complete(token, { stamp_png: dataUrl(rgba(120, 120)) })).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);
  });
});

describe('an image that can no longer be read at finalization', () => {
  it('(stored before uploads were checked completely) is drawn as the name with a note; the document is approved', async () => {
    const { doc, token, since } = await sentTo([
      { name: 'سارة المطيري', phone: PHONES.saudiA, action_type: 'sign', order: 1 },
      { name: 'Lina Approver', phone: PHONES.uk, action_type: 'approve_only', order: 2 },
    ]);
    expect((await complete(token, { signature_png: TINY_PNG })).status).toBe(200);
    const { signature_key: key } = await db()('approvers')
      .where({ id: doc.approvers[0]!.id })
      .first<{ signature_key: string }>();
    // What main accepted before: a valid header over pixel data that does not inflate.
    const stale = pngOf(ihdr(40, 16), chunk('IDAT', Buffer.from('not a zlib stream')), chunk('IEND'));
    await h.service.deps.storage.put(key, Readable.from([stale]), { contentType: 'image/png' });

    const second = await nthMessageTo(h, PHONES.uk, since[1]!);
    expect((await tapButton(h, { from: PHONES.uk, payload: quickRepliesOf(second)[0]! })).status).toBe(200);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);

    const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;
    const file = path.join(h.dataDir, `${doc.id}.pdf`);
    await writeFile(file, Buffer.from(await (await fetchPublic(h, data.download_url)).arrayBuffer()));
    expect(pdfsig(file, h.pki.nssDir).signatures[0]).toMatchObject({
      valid: true,
      total: true,
      trusted: true,
    });
    expect(pageText(file, 3)).toContain('Signature image unreadable; name shown');
  });
});
