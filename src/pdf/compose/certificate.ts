import type { FinalizeApprover, FinalizeDocumentInfo } from '../types.ts';
import { PageCanvas, type Rgb, type TextStyle, type Typesetter } from './canvas.ts';
import { A4 } from './pages.ts';
import { QR_QUIET_MODULES, drawQr, qrRuns } from './qr.ts';
import {
  ACTION_LABEL,
  CHANNEL_LABEL,
  LABELS,
  formatHijri,
  formatRiyadh,
  formatUtc,
  ltr,
  maskPhone,
  outcome,
  REMINDER_KIND_LABEL,
  VERIFIED_BY_LABEL,
} from './wording.ts';

interface Row {
  label: { en: string; ar: string };
  /** Each value is wrapped on its own; Arabic values align right, others left. */
  values: string[];
}

interface Block {
  header?: { en: string; ar: string };
  rows: Row[];
}

const MARGIN = 40;
const WIDTH = A4[0] - 2 * MARGIN;
const COL_LABEL = 108;
const GAP = 8;
const COL_VALUE = WIDTH - 2 * COL_LABEL - 2 * GAP;
const TOP = A4[1] - MARGIN;
const BOTTOM = MARGIN + 28;

const LABEL: TextStyle = { size: 7.5, color: [0.38, 0.4, 0.45] };
const VALUE: TextStyle = { size: 8.5, color: [0.08, 0.09, 0.12] };
const HEADER: TextStyle = { size: 9.5, weight: 'bold', color: [0.1, 0.16, 0.35] };
const RULE: Rgb = [0.86, 0.88, 0.92];
const BAND: Rgb = [0.93, 0.95, 0.985];
const lineHeight = (s: TextStyle) => s.size * 1.5;
const PAD = 3.5;

export interface CertificateData {
  document: FinalizeDocumentInfo;
  approvers: readonly FinalizeApprover[];
  originalPageCount: number;
  /** Approvers whose image could not be read: their name was drawn instead, and the certificate says so. */
  unreadableImages?: ReadonlySet<FinalizeApprover>;
}

/**
 * Lays out the bilingual audit certificate: English labels on the left, Arabic labels on the right, values in the
 * middle, one block for the document and one per approver, continuing onto as many pages as needed (a block is
 * never split unless it is taller than a page). Returns one canvas per page; `finishFooters` writes the page
 * numbers once the final page count is known.
 */
export function layoutCertificate(typesetter: Typesetter, data: CertificateData): CertificatePages {
  const blocks = [
    documentBlock(data),
    ...data.approvers.map((a, i) =>
      approverBlock(a, i, data.approvers.length, data.unreadableImages?.has(a) ?? false),
    ),
  ];
  const pages: PageCanvas[] = [];
  let canvas = newPage(typesetter, pages, true);
  let y = firstPageBodyTop(canvas);
  if (data.document.verificationUrl) y = verificationBand(canvas, data.document.verificationUrl, y);
  for (const block of blocks) {
    const height = blockHeight(canvas, block);
    if (y - height < BOTTOM && y < TOP - 80) {
      canvas = newPage(typesetter, pages, false);
      y = TOP - 34;
    }
    y = drawBlock(canvas, block, y, () => {
      canvas = newPage(typesetter, pages, false);
      return { canvas, y: TOP - 34 };
    });
    y -= 12;
  }
  return new CertificatePages(pages, data.document.reference);
}

export class CertificatePages {
  constructor(
    readonly canvases: PageCanvas[],
    private readonly reference: string,
  ) {}

  /** Page numbers of the whole final document: the certificate's first page is `firstPageNumber`. */
  finishFooters(firstPageNumber: number, totalPages: number): void {
    this.canvases.forEach((c, i) => {
      const n = firstPageNumber + i;
      c.line(MARGIN, MARGIN + 14, MARGIN + WIDTH, MARGIN + 14, RULE, 0.5);
      c.text(`${this.reference} · ${LABELS.page.en} ${n} / ${totalPages}`, MARGIN, MARGIN + 3, LABEL);
      c.text(
        `${LABELS.page.ar} ${ltr(`${n} / ${totalPages}`)} · ${ltr(this.reference)}`,
        MARGIN,
        MARGIN + 3,
        { ...LABEL, direction: 'rtl' },
        { width: WIDTH },
      );
    });
  }
}

function newPage(typesetter: Typesetter, pages: PageCanvas[], first: boolean): PageCanvas {
  const canvas = new PageCanvas(typesetter);
  pages.push(canvas);
  const title = first ? LABELS.certificateTitle : LABELS.continued;
  const size = first ? 17 : 11;
  canvas.text(title.en, MARGIN, TOP - size, { size, weight: 'bold', color: [0.1, 0.16, 0.35] });
  canvas.text(
    title.ar,
    MARGIN,
    TOP - size,
    { size, weight: 'bold', color: [0.1, 0.16, 0.35], direction: 'rtl' },
    { width: WIDTH },
  );
  canvas.line(MARGIN, TOP - size - 8, MARGIN + WIDTH, TOP - size - 8, [0.1, 0.16, 0.35], 1);
  return canvas;
}

function firstPageBodyTop(canvas: PageCanvas): number {
  // The statement, in both languages, under the title.
  let y = TOP - 17 - 22;
  const half = (WIDTH - 16) / 2;
  const en = canvas.wrap(LABELS.statement.en, VALUE, half);
  const ar = canvas.wrap(LABELS.statement.ar, { ...VALUE, direction: 'rtl' }, half);
  const lines = Math.max(en.length, ar.length);
  for (let i = 0; i < lines; i++) {
    const enLine = en[i];
    const arLine = ar[i];
    if (enLine) canvas.text(enLine, MARGIN, y, VALUE);
    if (arLine) canvas.text(arLine, MARGIN + half + 16, y, { ...VALUE, direction: 'rtl' }, { width: half });
    y -= lineHeight(VALUE);
  }
  return y - 10;
}

/** A time in UTC, in Riyadh, and as the Umm al-Qura Hijri date in both languages. */
function times(date: Date): string[] {
  return [formatUtc(date), formatRiyadh(date), ...hijri(date)];
}

function hijri(date: Date): string[] {
  const h = formatHijri(date);
  return [h.en, h.ar];
}

const QR_MODULE = 2;
const SMALL: TextStyle = { size: 7.5, color: [0.24, 0.26, 0.3] };

/**
 * The verification band under the statement: the QR code of the page's URL at the left, the heading and the
 * explanation in English (left) and Arabic (right) beside it, and the URL itself. The QR code keeps its quiet
 * zone clear (nothing is drawn within QR_QUIET_MODULES modules of it). Returns the y below the band.
 */
function verificationBand(canvas: PageCanvas, url: string, top: number): number {
  const qr = qrRuns(url);
  const side = qr.size * QR_MODULE;
  const quiet = QR_QUIET_MODULES * QR_MODULE;
  const height = side + 2 * quiet;
  canvas.rect(MARGIN, top - height, WIDTH, height, { stroke: RULE, lineWidth: 0.6 });
  drawQr(canvas, qr, MARGIN + quiet, top - quiet, QR_MODULE);

  const textX = MARGIN + side + 2 * quiet;
  const textWidth = MARGIN + WIDTH - textX - 8;
  const half = (textWidth - 12) / 2;
  let y = top - quiet - HEADER.size;
  canvas.text(LABELS.verifyTitle.en, textX, y, HEADER);
  canvas.text(LABELS.verifyTitle.ar, textX, y, { ...HEADER, direction: 'rtl' }, { width: textWidth });
  y -= lineHeight(HEADER) + 1;
  const en = canvas.wrap(LABELS.verifyHow.en, SMALL, half);
  const ar = canvas.wrap(LABELS.verifyHow.ar, { ...SMALL, direction: 'rtl' }, half);
  for (let i = 0; i < Math.max(en.length, ar.length); i++) {
    if (en[i]) canvas.text(en[i]!, textX, y, SMALL);
    if (ar[i]) canvas.text(ar[i]!, textX + half + 12, y, { ...SMALL, direction: 'rtl' }, { width: half });
    y -= lineHeight(SMALL);
  }
  const urlStyle: TextStyle = { size: 9, weight: 'bold', color: [0.1, 0.16, 0.35] };
  canvas.text(url, textX, Math.min(y - 3, top - height + quiet), urlStyle, {
    width: textWidth,
    align: 'center',
  });
  return top - height - 12;
}

function documentBlock(data: CertificateData): Block {
  const d = data.document;
  return {
    header: LABELS.document,
    rows: [
      { label: LABELS.reference, values: [d.reference] },
      { label: LABELS.title, values: [d.titleEn, d.titleAr] },
      { label: LABELS.account, values: [d.accountName] },
      { label: LABELS.sha256, values: [d.originalSha256] },
      { label: LABELS.originalPages, values: [String(data.originalPageCount)] },
      { label: LABELS.created, values: times(d.createdAt) },
      { label: LABELS.sent, values: times(d.sentAt) },
      { label: LABELS.completed, values: times(d.completedAt) },
    ],
  };
}

function approverBlock(a: FinalizeApprover, index: number, total: number, unreadableImage: boolean): Block {
  const action = ACTION_LABEL[a.actionType];
  const did = outcome(a, unreadableImage);
  const channel = CHANNEL_LABEL[a.channel];
  const verified = VERIFIED_BY_LABEL[a.verifiedBy ?? 'none'];
  const rows: Row[] = [
    { label: LABELS.name, values: [a.nameEn, a.nameAr] },
    { label: LABELS.role, values: [a.roleEn ?? '', a.roleAr ?? ''].filter((v) => v.trim() !== '') },
    { label: LABELS.phone, values: [maskPhone(a.phone)] },
    { label: LABELS.action, values: [action.en, action.ar] },
    { label: LABELS.result, values: [did.en, did.ar] },
    { label: LABELS.channel, values: [channel.en, channel.ar] },
    { label: LABELS.verifiedBy, values: [verified.en, verified.ar] },
    {
      label: LABELS.reminders,
      values: a.reminders?.length
        ? a.reminders.flatMap((r) => [
            `${formatUtc(r.at)} — ${REMINDER_KIND_LABEL[r.kind].en}`,
            REMINDER_KIND_LABEL[r.kind].ar,
          ])
        : [LABELS.noReminders.en, LABELS.noReminders.ar],
    },
    { label: LABELS.timeUtc, values: [formatUtc(a.actedAt)] },
    { label: LABELS.timeRiyadh, values: [formatRiyadh(a.actedAt)] },
    { label: LABELS.timeHijri, values: hijri(a.actedAt) },
  ];
  // A delegate: each delegation that led to them — who handed the step to whom, when, why, how they were verified.
  for (const d of a.delegatedFrom ?? []) {
    const how = VERIFIED_BY_LABEL[d.verifiedBy ?? 'none'];
    rows.push({
      label: LABELS.delegatedBy,
      values: [`${d.nameEn} (${maskPhone(d.phone)})`, d.nameAr !== d.nameEn ? d.nameAr : ''].filter(Boolean),
    });
    rows.push({
      label: LABELS.delegatedAt,
      values: [...times(d.at), `${LABELS.verifiedBy.en}: ${how.en}`, `${LABELS.verifiedBy.ar}: ${how.ar}`],
    });
    rows.push({
      label: LABELS.delegationReason,
      values: [d.reason && d.reason.trim() !== '' ? d.reason : '—'],
    });
  }
  if (a.channel === 'page') {
    rows.push({ label: LABELS.ip, values: [a.ip ?? '—'] });
    rows.push({ label: LABELS.userAgent, values: [a.userAgent ?? '—'] });
  } else {
    rows.push({ label: LABELS.whatsappId, values: [a.whatsappMessageId ?? '—'] });
  }
  return {
    header: {
      en: `${LABELS.approver.en} ${index + 1} ${LABELS.of.en} ${total}`,
      ar: `${LABELS.approver.ar} ${ltr(String(index + 1))} ${LABELS.of.ar} ${ltr(String(total))}`,
    },
    rows: rows.filter((r) => r.values.length > 0),
  };
}

interface RowLayout {
  en: string[];
  ar: string[];
  values: string[];
  height: number;
}

function layoutRow(canvas: PageCanvas, row: Row): RowLayout {
  const en = canvas.wrap(row.label.en, LABEL, COL_LABEL);
  const ar = canvas.wrap(row.label.ar, { ...LABEL, direction: 'rtl' }, COL_LABEL);
  const values = row.values.flatMap((v) => canvas.wrap(v, VALUE, COL_VALUE));
  const lines = Math.max(
    en.length * lineHeight(LABEL),
    ar.length * lineHeight(LABEL),
    values.length * lineHeight(VALUE),
  );
  return { en, ar, values, height: lines + 2 * PAD };
}

const HEADER_HEIGHT = 18;

function blockHeight(canvas: PageCanvas, block: Block): number {
  return (block.header ? HEADER_HEIGHT : 0) + block.rows.reduce((h, r) => h + layoutRow(canvas, r).height, 0);
}

function drawBlock(
  canvas: PageCanvas,
  block: Block,
  top: number,
  nextPage: () => { canvas: PageCanvas; y: number },
): number {
  let y = top;
  let c = canvas;
  const header = () => {
    if (!block.header) return;
    c.rect(MARGIN, y - HEADER_HEIGHT, WIDTH, HEADER_HEIGHT, { fill: BAND });
    c.text(block.header.en, MARGIN + 6, y - 12.5, HEADER);
    c.text(block.header.ar, MARGIN, y - 12.5, { ...HEADER, direction: 'rtl' }, { width: WIDTH - 6 });
    y -= HEADER_HEIGHT;
  };
  header();
  for (const row of block.rows) {
    const r = layoutRow(c, row);
    if (y - r.height < BOTTOM) {
      ({ canvas: c, y } = nextPage());
      header();
    }
    const first = y - PAD - LABEL.size;
    r.en.forEach((line, i) => c.text(line, MARGIN + 6, first - i * lineHeight(LABEL), LABEL));
    r.ar.forEach((line, i) =>
      c.text(
        line,
        MARGIN + WIDTH - COL_LABEL - 6,
        first - i * lineHeight(LABEL),
        { ...LABEL, direction: 'rtl' },
        { width: COL_LABEL },
      ),
    );
    const valueTop = y - PAD - VALUE.size;
    r.values.forEach((line, i) =>
      c.text(line, MARGIN + COL_LABEL + GAP, valueTop - i * lineHeight(VALUE), VALUE, { width: COL_VALUE }),
    );
    y -= r.height;
    c.line(MARGIN, y, MARGIN + WIDTH, y, RULE, 0.4);
  }
  return y;
}
