/**
 * Writes examples/contract.pdf, the sample the quick start uploads: a two-page supply contract with its title and
 * every clause in Arabic and English. It is drawn with the fonts and text layout the signed PDF's certificate uses
 * (HarfBuzz shaping, right-to-left lines), so the Arabic is real, selectable text, and every date in the file is
 * fixed, so running it again writes the same bytes (a unit test checks that the committed file is this output).
 *
 *   npx tsx examples/make-contract-pdf.ts [out.pdf]
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PDFDocument, PDFName } from 'pdf-lib';
import { PageCanvas, type TextStyle, type Typesetter } from '../src/pdf/compose/canvas.ts';
import { A4 } from '../src/pdf/compose/pages.ts';
import { loadFontSet } from '../src/pdf/text/fonts.ts';
import { PdfFonts } from '../src/pdf/text/pdf-fonts.ts';
import { flateStream } from '../src/pdf/writer/flate.ts';

export const CONTRACT_TITLE = { ar: 'عقد توريد أجهزة', en: 'Equipment supply contract' } as const;

interface Clause {
  en: [heading: string, text: string];
  ar: [heading: string, text: string];
}

const PARTIES: Clause = {
  en: ['Parties', 'Example Co (the Buyer) and Gulf Devices Trading (the Supplier) agree as follows.'],
  ar: ['الطرفان', 'اتفقت شركة المثال (المشتري) وشركة الخليج لتجارة الأجهزة (المورد) على ما يلي.'],
};

const CLAUSES: Clause[][] = [
  [
    PARTIES,
    {
      en: [
        '1. Subject',
        'The Supplier delivers twenty laptop computers to the Buyer, to the specification attached.',
      ],
      ar: ['١. موضوع العقد', 'يورد المورد إلى المشتري عشرين جهاز حاسب محمول وفق المواصفات المرفقة.'],
    },
    {
      en: ['2. Price and payment', 'The price is SAR 120,000, paid within 30 days of delivery.'],
      ar: ['٢. السعر والدفع', 'السعر مئة وعشرون ألف ريال سعودي، يدفع خلال ثلاثين يوما من التسليم.'],
    },
    {
      en: ['3. Delivery', "Delivery is to the Buyer's office in Riyadh within 14 days of signature."],
      ar: ['٣. التسليم', 'يتم التسليم في مكتب المشتري بالرياض خلال أربعة عشر يوما من التوقيع.'],
    },
  ],
  [
    {
      en: ['4. Warranty', 'The Supplier warrants the devices for one year from delivery.'],
      ar: ['٤. الضمان', 'يضمن المورد الأجهزة لمدة سنة واحدة من تاريخ التسليم.'],
    },
    {
      en: ['5. Governing law', 'This contract is governed by the laws of the Kingdom of Saudi Arabia.'],
      ar: ['٥. النظام الواجب التطبيق', 'يخضع هذا العقد لأنظمة المملكة العربية السعودية.'],
    },
    {
      en: [
        'Approval',
        "Wathiq adds each approver's signature and a bilingual audit certificate after this page.",
      ],
      ar: ['الاعتماد', 'يضيف واثق توقيع كل معتمد وشهادة تدقيق باللغتين بعد هذه الصفحة.'],
    },
  ],
];

const MARGIN = 56;
const WIDTH = A4[0] - 2 * MARGIN;
const GREY = [0.35, 0.37, 0.42] as const;

/** Draws one line across the text width, from its start (the right for right-to-left text) unless centred. */
function line(
  canvas: PageCanvas,
  text: string,
  y: number,
  style: TextStyle,
  align: 'start' | 'center' = 'start',
) {
  canvas.text(text, MARGIN, y, style, { width: WIDTH, align });
}

/** Draws wrapped lines of one language from the top `y` down; returns the y below them. */
function paragraph(canvas: PageCanvas, text: string, y: number, style: TextStyle, leading: number): number {
  for (const wrapped of canvas.wrap(text, style, WIDTH)) {
    line(canvas, wrapped, y, style);
    y -= leading;
  }
  return y;
}

function drawPage(canvas: PageCanvas, clauses: Clause[], page: number, pages: number): void {
  const ar: TextStyle = { size: 12, direction: 'rtl' };
  const en: TextStyle = { size: 10.5, direction: 'ltr' };
  const note: TextStyle = { size: 9, color: GREY, direction: 'ltr' };
  let y = A4[1] - MARGIN - 20;
  if (page === 1) {
    line(canvas, CONTRACT_TITLE.ar, y, { size: 22, weight: 'bold', direction: 'rtl' });
    line(canvas, CONTRACT_TITLE.en, (y -= 28), { size: 18, weight: 'bold', direction: 'ltr' });
    line(
      canvas,
      'A sample for the Wathiq quick start, not a real contract · نموذج للتجربة وليس عقدا حقيقيا',
      (y -= 20),
      note,
    );
    canvas.line(MARGIN, (y -= 14), MARGIN + WIDTH, y, GREY);
    y -= 30;
  }
  for (const clause of clauses) {
    line(canvas, clause.ar[0], y, { ...ar, weight: 'bold' });
    y = paragraph(canvas, clause.ar[1], y - 20, ar, 20);
    line(canvas, clause.en[0], y - 4, { ...en, weight: 'bold' });
    y = paragraph(canvas, clause.en[1], y - 22, en, 16) - 22;
  }
  line(
    canvas,
    `${CONTRACT_TITLE.en} · page ${page} of ${pages}`,
    MARGIN - 20,
    { ...note, size: 8 },
    'center',
  );
}

/** The sample contract's bytes: the same on every run. */
export async function makeContractPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const typesetter: Typesetter = { fontSet: await loadFontSet(), pdfFonts: new PdfFonts(context) };
  CLAUSES.forEach((clauses, i) => {
    const canvas = new PageCanvas(typesetter);
    drawPage(canvas, clauses, i + 1, CLAUSES.length);
    const page = doc.addPage([A4[0], A4[1]]);
    canvas.writeResources(context, page.node.Resources() ?? context.obj({}));
    page.node.set(PDFName.of('Contents'), context.register(flateStream(context, canvas.content())));
  });
  typesetter.pdfFonts.finish();

  const fixed = new Date('2026-01-01T09:00:00Z');
  doc.setTitle(`${CONTRACT_TITLE.ar} · ${CONTRACT_TITLE.en}`);
  doc.setSubject('A sample document for the Wathiq quick start');
  doc.setProducer('Wathiq examples/make-contract-pdf.ts');
  doc.setCreationDate(fixed);
  doc.setModificationDate(fixed);
  doc.setLanguage('ar');
  return doc.save({ useObjectStreams: false });
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const out = process.argv[2] ?? path.join(import.meta.dirname, 'contract.pdf');
  const bytes = await makeContractPdf();
  await writeFile(out, bytes);
  process.stdout.write(`${out}: ${bytes.length} bytes\n`);
}
