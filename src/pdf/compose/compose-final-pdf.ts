import { loadFontSet } from '../text/fonts.ts';
import { PdfFonts } from '../text/pdf-fonts.ts';
import type { FinalizeApprover, FinalizeDocumentInfo } from '../types.ts';
import { type PdfRevision, openRevision } from '../writer/pdf-revision.ts';
import { writeIncrement } from '../writer/write-increment.ts';
import { PageCanvas, type Typesetter } from './canvas.ts';
import { layoutCertificate } from './certificate.ts';
import { DEFAULT_MAX_IMAGE_SIDE_PX, PngError } from '../../images/png.ts';
import { FinalizeInputError, type MarkImage, UNREADABLE, drawMark, embedPng, markAspect } from './marks.ts';
import { appendPage, displaySize, displayToUserMatrix, overlayOnPage, pageGeometry } from './pages.ts';
import { type SignatureBox, layoutSignaturePages } from './signatures.ts';
import { formatUtc } from './wording.ts';

export interface ComposeInput {
  document: FinalizeDocumentInfo;
  approvers: readonly FinalizeApprover[];
  options?: {
    /** Largest width and height of a signature or stamp image (MAX_IMAGE_SIDE_PX); default 4096. */
    maxImageSidePx?: number;
  };
}

/** Approvers in their order (ties keep the order given). */
export function orderedApprovers(approvers: readonly FinalizeApprover[]): FinalizeApprover[] {
  return approvers
    .map((a, i) => ({ a, i }))
    .sort((x, y) => x.a.order - y.a.order || x.i - y.i)
    .map((x) => x.a);
}

/**
 * Adds to an opened revision everything the approval produced: each signing or stamping approver's mark at their
 * placement or in a labelled box on the signatures page(s), then the bilingual audit certificate page(s). The
 * original pages' content is not changed (placements are drawn over them). Returns the final page count.
 */
export async function composeInto(
  revision: PdfRevision,
  input: ComposeInput,
): Promise<{ pageCount: number; warnings: string[] }> {
  const typesetter: Typesetter = { fontSet: await loadFontSet(), pdfFonts: new PdfFonts(revision.context) };
  const originalPages = revision.doc.getPages();
  const approvers = orderedApprovers(input.approvers);
  const seal = { accountName: input.document.accountName };

  const marked = approvers.filter(
    (a) => a.status === 'completed' && (a.actionType === 'sign' || a.actionType === 'stamp'),
  );
  const limits = { maxSidePx: input.options?.maxImageSidePx ?? DEFAULT_MAX_IMAGE_SIDE_PX };
  const { images, warnings } = embedMarkImages(revision, marked, limits);
  const unreadable = new Set([...images].filter(([, image]) => image === UNREADABLE).map(([a]) => a));
  const boxes = drawPlacements(revision, typesetter, marked, images, seal);

  const signaturePages = layoutSignaturePages(typesetter, boxes, seal);
  const certificate = layoutCertificate(typesetter, {
    document: input.document,
    approvers,
    originalPageCount: originalPages.length,
    unreadableImages: unreadable,
  });
  const pageCount = originalPages.length + signaturePages.length + certificate.canvases.length;
  certificate.finishFooters(originalPages.length + signaturePages.length + 1, pageCount);
  for (const c of [...signaturePages, ...certificate.canvases]) appendPage(revision, c);
  typesetter.pdfFonts.finish();
  return { pageCount, warnings };
}

/**
 * Embeds each marking approver's signature or stamp image. An image the reader refuses was stored before uploads
 * were checked completely (or was damaged since). Failing here would strand a document every approver has acted
 * on, and retrying cannot change the bytes: the approver's name is drawn in its place with a note saying so, here
 * and on the certificate.
 */
function embedMarkImages(
  revision: PdfRevision,
  marked: readonly FinalizeApprover[],
  limits: { maxSidePx: number },
): { images: Map<FinalizeApprover, MarkImage>; warnings: string[] } {
  const images = new Map<FinalizeApprover, MarkImage>();
  const warnings: string[] = [];
  for (const a of marked) {
    const png = a.actionType === 'sign' ? a.signaturePng : a.stampPng;
    if (!png || png.length === 0) continue;
    try {
      images.set(a, embedPng(revision.context, png, limits));
    } catch (err) {
      if (!(err instanceof PngError)) throw err;
      images.set(a, UNREADABLE);
      warnings.push(
        `The ${a.actionType} image of ${a.nameEn} could not be read (${err.message}); their name is shown instead.`,
      );
    }
  }
  return { images, warnings };
}

/**
 * Draws the marks that have a placement over their page (one overlay per page, pages in order) and returns the
 * rest as boxes for the signatures page(s).
 */
function drawPlacements(
  revision: PdfRevision,
  typesetter: Typesetter,
  marked: readonly FinalizeApprover[],
  images: Map<FinalizeApprover, MarkImage>,
  seal: { accountName: string },
): SignatureBox[] {
  const originalPages = revision.doc.getPages();
  const byPage = new Map<number, FinalizeApprover[]>();
  const boxes: SignatureBox[] = [];
  for (const a of marked) {
    if (a.placement) {
      const list = byPage.get(a.placement.page) ?? [];
      list.push(a);
      byPage.set(a.placement.page, list);
    } else boxes.push({ approver: a, image: images.get(a) });
  }
  for (const [pageNumber, list] of [...byPage].sort(([x], [y]) => x - y)) {
    const page = originalPages[pageNumber - 1];
    if (!page) {
      throw new FinalizeInputError(
        'invalid_placement',
        `A placement names page ${pageNumber}, but the document has ${originalPages.length} pages.`,
      );
    }
    const geometry = pageGeometry(page.node, revision.context);
    const size = displaySize(geometry);
    const canvas = new PageCanvas(typesetter);
    for (const a of list) drawPlacedMark(canvas, a, images.get(a), { pageNumber, size }, seal);
    overlayOnPage(revision, page.ref, canvas, displayToUserMatrix(geometry), size);
  }
  return boxes;
}

/** One approver's mark at their placement, refused when it does not fit the page, with a caption under it. */
function drawPlacedMark(
  canvas: PageCanvas,
  a: FinalizeApprover,
  image: MarkImage | undefined,
  page: { pageNumber: number; size: [number, number] },
  seal: { accountName: string },
): void {
  const [dw, dh] = page.size;
  const p = a.placement as NonNullable<FinalizeApprover['placement']>;
  const h = p.width * markAspect(a, image);
  const tolerance = 0.5;
  if (
    !(p.width > 0) ||
    p.x < -tolerance ||
    p.y < -tolerance ||
    p.x + p.width > dw + tolerance ||
    p.y + h > dh + tolerance
  ) {
    throw new FinalizeInputError(
      'invalid_placement',
      `The placement of approver ${a.order} (x ${p.x}, y ${p.y}, width ${p.width}) does not fit on page ${page.pageNumber} (${Math.round(dw)} × ${Math.round(dh)} points).`,
    );
  }
  drawMark(
    canvas,
    a,
    image,
    { x: p.x, y: p.y, w: p.width, h },
    { ...seal, date: a.actedAt.toISOString().slice(0, 10) },
  );
  const caption = `${a.nameEn} · ${formatUtc(a.actedAt)}`;
  const size = 5.5;
  const below = p.y - size - 1.5;
  canvas.text(
    caption,
    p.x,
    below >= 1 ? below : p.y + h + 1.5,
    { size, color: [0.35, 0.37, 0.42] },
    { width: p.width, align: 'center' },
  );
}

/**
 * The composed (unsigned) final PDF: the original file followed by an incremental update holding the marks,
 * signatures page(s) and certificate page(s).
 */
export async function composeFinalPdf(
  original: Uint8Array,
  input: ComposeInput,
): Promise<{ pdf: Buffer; pageCount: number; warnings: string[] }> {
  const revision = await openRevision(original);
  const { pageCount, warnings } = await composeInto(revision, input);
  return { pdf: writeIncrement(revision).pdf, pageCount, warnings };
}
