import { PDFDocument, PDFName, StandardFonts, rgb } from 'pdf-lib';
import { PageCanvas, type Typesetter } from '../../src/pdf/compose/canvas.ts';
import { loadFontSet } from '../../src/pdf/text/fonts.ts';
import { PdfFonts } from '../../src/pdf/text/pdf-fonts.ts';
import { flateStream } from '../../src/pdf/writer/flate.ts';

/** PDFs for the approval page's browser tests: long contracts, and pages that show how text is drawn. */

const A4: [number, number] = [595.28, 841.89];

const CLAUSES_AR = [
  'يلتزم الطرف الأول بتوريد المواد المذكورة في الملحق رقم ١ وفق المواصفات المعتمدة وفي المواعيد المتفق عليها.',
  'يدفع الطرف الثاني قيمة كل دفعة خلال ثلاثين يومًا من تاريخ استلام الفاتورة مستوفية الشروط.',
  'لا يجوز لأي من الطرفين التنازل عن حقوقه أو التزاماته بموجب هذا العقد إلا بموافقة كتابية من الطرف الآخر.',
  'تخضع هذه الاتفاقية لأنظمة المملكة العربية السعودية، وتختص محاكم مدينة الرياض بالنظر في أي نزاع ينشأ عنها.',
  'يحافظ الطرفان على سرية المعلومات المتبادلة بينهما ولا يفصحان عنها لأي طرف ثالث طوال مدة العقد وبعد انتهائه.',
];

/** Draws PageCanvas pages (shaped text, embedded Noto fonts) into a new PDF. */
async function composed(pages: ((canvas: PageCanvas, n: number) => void)[]): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const typesetter: Typesetter = { fontSet: await loadFontSet(), pdfFonts: new PdfFonts(doc.context) };
  pages.forEach((draw, i) => {
    const canvas = new PageCanvas(typesetter);
    draw(canvas, i + 1);
    const page = doc.addPage(A4);
    const resources = doc.context.obj({});
    canvas.writeResources(doc.context, resources);
    page.node.set(PDFName.of('Resources'), resources);
    page.node.set(PDFName.of('Contents'), doc.context.register(flateStream(doc.context, canvas.content())));
  });
  typesetter.pdfFonts.finish();
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A contract in Arabic of `pages` A4 pages: a heading, numbered clauses, a footer with the page number. */
export function arabicContract(pages: number): Promise<Buffer> {
  return composed(
    Array.from({ length: pages }, () => (canvas: PageCanvas, n: number) => {
      const right = A4[0] - 56;
      canvas.text(
        `عقد توريد وخدمات — الصفحة ${n}`,
        56,
        A4[1] - 80,
        { size: 18, weight: 'bold' },
        {
          width: right - 56,
          align: 'right',
        },
      );
      let y = A4[1] - 120;
      for (let c = 0; c < 9; c++) {
        const clause = `البند ${(n - 1) * 9 + c + 1}: ${CLAUSES_AR[c % CLAUSES_AR.length]}`;
        for (const line of canvas.wrap(clause, { size: 12 }, right - 56)) {
          canvas.text(line, 56, y, { size: 12 }, { width: right - 56, align: 'right' });
          y -= 20;
        }
        y -= 8;
      }
      canvas.text(
        `الصفحة ${n} من ${pages}`,
        56,
        40,
        { size: 10, color: [0.35, 0.37, 0.42] },
        {
          width: right - 56,
          align: 'center',
        },
      );
    }),
  );
}

/** Latin text in embedded fonts (Noto Sans, regular and bold, subset into the file). */
export function embeddedFontsPdf(): Promise<Buffer> {
  return composed([
    (canvas) => {
      canvas.text('Supply agreement with embedded fonts', 56, A4[1] - 80, { size: 20, weight: 'bold' });
      let y = A4[1] - 120;
      for (const line of [
        'The supplier delivers the goods listed in annex 1 on the agreed dates.',
        'Payment is due within thirty days of a complete invoice: 1,250,000.00 SAR.',
        'Neither party may assign this agreement without written consent.',
      ]) {
        canvas.text(line, 56, y, { size: 13 });
        y -= 24;
      }
    },
  ]);
}

/** One page in the standard 14 fonts, not embedded: Helvetica, Times and Courier, as many generators write them. */
export async function standardFontsPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage(A4);
  let y = A4[1] - 80;
  for (const [name, size] of [
    [StandardFonts.Helvetica, 20],
    [StandardFonts.HelveticaBold, 16],
    [StandardFonts.TimesRoman, 16],
    [StandardFonts.Courier, 14],
  ] as const) {
    const font = await doc.embedFont(name);
    page.drawText(`${name}: The quick brown fox jumps over 1,234 lazy dogs.`, {
      x: 48,
      y,
      size,
      font,
      color: rgb(0.05, 0.05, 0.1),
    });
    y -= size * 2.2;
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** `pages` pages of Latin text in Helvetica (a long contract of the kind most generators write). */
export async function longContract(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++) {
    const page = doc.addPage(A4);
    page.drawText(`Master services agreement, page ${n} of ${pages}`, {
      x: 56,
      y: A4[1] - 80,
      size: 16,
      font,
    });
    for (let line = 0; line < 30; line++)
      page.drawText(`Clause ${n}.${line + 1}: the parties agree to the terms set out in this section.`, {
        x: 56,
        y: A4[1] - 120 - line * 20,
        size: 11,
        font,
      });
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}
