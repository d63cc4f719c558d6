import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { FinalizeApprover, FinalizeDocumentInfo, FinalizeInput } from '../../src/pdf/types.ts';
import type { Signer } from '../../src/pdf/sign/signer.ts';

/** A minimal RGBA PNG encoder: enough for signature and stamp images in tests. */
export function png(
  width: number,
  height: number,
  pixel: (x: number, y: number) => [number, number, number, number],
): Buffer {
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0;
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), y * (width * 4 + 1) + 1 + x * 4);
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A hand-drawn-looking squiggle on a transparent background. */
export function signaturePng(seed = 1): Buffer {
  return png(360, 120, (x, y) => {
    const cy = 60 + 35 * Math.sin(x / (18 + seed)) * Math.cos(x / 53);
    const d = Math.abs(y - cy);
    return d < 2.5 ? [20, 40, 120, 255] : d < 3.5 ? [20, 40, 120, 110] : [255, 255, 255, 0];
  });
}

/** A red ring with a bar: stands in for a scanned company stamp. */
export function stampPng(): Buffer {
  return png(200, 200, (x, y) => {
    const r = Math.hypot(x - 100, y - 100);
    const ink = (r > 80 && r < 92) || (r < 60 && Math.abs(y - 100) < 8);
    return ink ? [190, 30, 40, 230] : [255, 255, 255, 0];
  });
}

const T0 = Date.parse('2026-03-01T06:30:00Z');
export const at = (minutes: number) => new Date(T0 + minutes * 60_000);

const PEOPLE: { ar: string; en: string; roleAr: string; roleEn: string }[] = [
  {
    ar: 'محمّد عبدالله العتيبي',
    en: 'Mohammed Abdullah Al-Otaibi',
    roleAr: 'المدير المالي',
    roleEn: 'Finance Manager',
  },
  { ar: 'سارة القحطاني', en: 'Sara Al-Qahtani', roleAr: 'مديرة العقود', roleEn: 'Contracts Lead' },
  { ar: 'عبدالإله الشهري', en: 'Abdulelah Al-Shehri', roleAr: 'المستشار القانوني', roleEn: 'Legal Counsel' },
  { ar: 'نورة الدوسري', en: 'Noura Al-Dosari', roleAr: 'رئيسة المشتريات', roleEn: 'Head of Procurement' },
  { ar: 'لؤي الحربي', en: 'Loay Al-Harbi', roleAr: 'مدير العمليات', roleEn: 'Operations Manager' },
  { ar: 'إلهام الغامدي', en: 'Elham Al-Ghamdi', roleAr: 'المدقق الداخلي', roleEn: 'Internal Auditor' },
];

const FAMILIES = [
  { ar: 'السبيعي', en: 'Al-Subaie' },
  { ar: 'المطيري', en: 'Al-Mutairi' },
  { ar: 'الشمري', en: 'Al-Shammari' },
  { ar: 'العنزي', en: 'Al-Anazi' },
  { ar: 'الزهراني', en: 'Al-Zahrani' },
  { ar: 'البلوي', en: 'Al-Balawi' },
  { ar: 'الرشيدي', en: 'Al-Rashidi' },
  { ar: 'الجهني', en: 'Al-Juhani' },
  { ar: 'الخالدي', en: 'Al-Khalidi' },
];

const KINDS: Pick<
  FinalizeApprover,
  'actionType' | 'channel' | 'signaturePng' | 'typedName' | 'stampPng' | 'generatedSeal'
>[] = [
  { actionType: 'sign', channel: 'page', signaturePng: signaturePng(1) },
  { actionType: 'stamp', channel: 'page', generatedSeal: true },
  { actionType: 'approve_only', channel: 'whatsapp' },
  { actionType: 'sign', channel: 'page', typedName: 'Abdulelah Al-Shehri' },
  { actionType: 'stamp', channel: 'page', stampPng: stampPng() },
  { actionType: 'review_only', channel: 'page' },
];

/** n approvers cycling through every action type and both channels. */
export function sampleApprovers(n: number, opts: { parallel?: boolean } = {}): FinalizeApprover[] {
  return Array.from({ length: n }, (_, i) => {
    const person = PEOPLE[i % PEOPLE.length] as (typeof PEOPLE)[number];
    const kind = KINDS[i % KINDS.length] as (typeof KINDS)[number];
    // Past the first six, unique names from a second family name: no digits, which bidi would move around.
    const family = FAMILIES[Math.floor(i / PEOPLE.length) - 1];
    // Sequential documents act in order; parallel ones in any order.
    const minute = opts.parallel ? ((i * 7) % n) * 3 + 1 : i * 3 + 1;
    return {
      nameAr: family ? `${person.ar} ${family.ar}` : person.ar,
      nameEn: family ? `${person.en} ${family.en}` : person.en,
      roleAr: person.roleAr,
      roleEn: person.roleEn,
      phone: `9665${String(10_000_000 + i * 1_234_567).slice(0, 8)}`,
      order: opts.parallel ? 1 : i + 1,
      status: 'completed',
      actedAt: at(minute),
      ip: kind.channel === 'page' ? `203.0.113.${10 + (i % 200)}` : null,
      userAgent:
        kind.channel === 'page'
          ? 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
          : null,
      whatsappMessageId:
        kind.channel === 'whatsapp'
          ? `wamid.HBgMOTY2NTAxMTEyMjIzFQIAEhggQTNFQjQ5RjY1NTM0RkM3MDA4QjY5QjdD${i}`
          : null,
      ...kind,
    };
  });
}

export function sampleDocument(original: Uint8Array, reference = 'WQT-2026-000042'): FinalizeDocumentInfo {
  return {
    reference,
    titleAr: 'عقد توريد أجهزة الحاسب لعام 2026',
    titleEn: 'Computer equipment supply contract 2026',
    createdAt: at(-120),
    sentAt: at(-60),
    completedAt: at(400),
    originalSha256: createHash('sha256').update(original).digest('hex'),
    accountName: 'شركة الحلول المتقدمة للتقنية',
  };
}

export function sampleInput(
  original: Uint8Array,
  signer: Signer,
  approvers: FinalizeApprover[],
): FinalizeInput {
  return { original, signer, document: sampleDocument(original), approvers };
}
