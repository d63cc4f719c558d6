/**
 * Hostile PDFs, made by the tests themselves (nothing large is committed): decompression bombs in object
 * streams, long filter chains, and well-formed object streams of an exact decoded size.
 */
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';

const MiB = 1024 * 1024;

/**
 * `bytes` zero bytes in zlib format (RFC 1950), made without holding them: one mebibyte is compressed once with a
 * full flush (byte-aligned, no reference to earlier data) and repeated, then a final block and the Adler-32.
 */
export function deflatedZeros(bytes: number): Buffer {
  const whole = Math.floor(bytes / MiB);
  const chunk = zlib.deflateRawSync(Buffer.alloc(MiB), {
    level: 9,
    finishFlush: zlib.constants.Z_FULL_FLUSH,
  });
  const last = zlib.deflateRawSync(Buffer.alloc(bytes - whole * MiB), { level: 9 });
  // Adler-32 of zeros: A stays 1, B adds 1 per byte.
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((bytes % 65521) << 16) | 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(whole).fill(chunk), last, adler]);
}

/** Compresses again with zlib: a second FlateDecode layer. */
export function deflated(data: Uint8Array): Buffer {
  return zlib.deflateSync(data, { level: 9 });
}

export interface StreamObject {
  dict: string;
  data: Uint8Array;
}

/**
 * A one-page PDF (catalog 1, pages 2, page 3, with a content stream 4) followed by `extra` objects numbered from
 * 5, with a classic cross-reference table. A StreamObject gets its /Length added.
 */
export function buildPdf(
  extra: (string | StreamObject)[] = [],
  options: { content?: StreamObject } = {},
): Buffer {
  const content = options.content ?? { dict: '', data: Buffer.from('BT /F1 12 Tf 72 720 Td (Hello) Tj ET') };
  const objects: (string | StreamObject)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    content,
    ...extra,
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(offset);
    const body =
      typeof object === 'string'
        ? [Buffer.from(`${i + 1} 0 obj\n${object}\nendobj\n`, 'latin1')]
        : [
            Buffer.from(
              `${i + 1} 0 obj\n<< ${object.dict} /Length ${object.data.length} >>\nstream\n`,
              'latin1',
            ),
            Buffer.from(object.data),
            Buffer.from('\nendstream\nendobj\n', 'latin1'),
          ];
    for (const b of body) {
      parts.push(b);
      offset += b.length;
    }
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f\r',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n\r`),
    'trailer',
    `<< /Size ${objects.length + 1} /Root 1 0 R >>`,
    'startxref',
    String(offset),
    '%%EOF',
    '',
  ].join('\n');
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}

/**
 * The decoded content of an object stream holding object `number`: a dictionary whose hex string of random bytes
 * pads it to exactly `decodedBytes` (random, so it compresses only about twice, like real object streams).
 */
export function objectStreamContent(decodedBytes: number, number = 100): Buffer {
  const header = `${number} 0 `;
  const open = '<< /Filler <';
  const close = '> >>';
  const pad = decodedBytes - header.length - open.length - close.length;
  if (pad < 0) throw new Error(`an object stream of ${decodedBytes} bytes is too small`);
  const hex = randomBytes(Math.ceil(pad / 2))
    .toString('hex')
    .slice(0, pad);
  return Buffer.from(`${header}${open}${hex}${close}`, 'latin1');
}

/** A well-formed PDF whose one object stream decodes to exactly `decodedBytes` (one FlateDecode). */
export function pdfWithObjectStream(decodedBytes: number): Buffer {
  const number = 100;
  const content = objectStreamContent(decodedBytes, number);
  return buildPdf([
    {
      dict: `/Type /ObjStm /N 1 /First ${`${number} 0 `.length} /Filter /FlateDecode`,
      data: deflated(content),
    },
  ]);
}

/**
 * The bomb measured on main: about 1 KB, whose object stream inflates through two FlateDecode filters to
 * `decodedBytes` (256 MiB by default) of zeros.
 */
export function objectStreamBomb(decodedBytes = 256 * MiB): Buffer {
  return buildPdf([
    {
      dict: '/Type /ObjStm /N 1 /First 4 /Filter [/FlateDecode /FlateDecode]',
      data: deflated(deflatedZeros(decodedBytes)),
    },
  ]);
}

/** A content stream behind `filters` filters (ASCIIHexDecode layers over FlateDecode). */
export function longFilterChainPdf(filters = 5): Buffer {
  let data: Buffer = deflated(Buffer.from('BT /F1 12 Tf 72 720 Td (Hello) Tj ET'));
  const names = ['/FlateDecode'];
  for (let i = 1; i < filters; i++) {
    data = Buffer.from(`${data.toString('hex')}>`, 'latin1');
    names.unshift('/ASCIIHexDecode');
  }
  return buildPdf([], { content: { dict: `/Filter [${names.join(' ')}]`, data } });
}

/**
 * A PDF whose object stream holds `count` small dictionaries: little to decode, much for pdf-lib to hold (each
 * object a few hundred bytes of heap).
 */
export function manyObjectsPdf(count: number): Buffer {
  const first = 1000;
  const numbers = Array.from({ length: count }, (_, i) => first + i);
  const bodies = numbers.map((n) => `<< /Id ${n} /Kids [${n} 0 R ${n} 0 R] /Name /Object${n} >>\n`);
  let at = 0;
  const header = numbers.map((n, i) => {
    const entry = `${n} ${at}`;
    at += bodies[i]!.length;
    return entry;
  });
  const head = `${header.join(' ')}\n`;
  const content = Buffer.from(head + bodies.join(''), 'latin1');
  return buildPdf([
    { dict: `/Type /ObjStm /N ${count} /First ${head.length} /Filter /FlateDecode`, data: deflated(content) },
  ]);
}
