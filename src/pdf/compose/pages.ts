import {
  PDFArray,
  PDFDict,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFRef,
  PDFStream,
  type PDFContext,
} from 'pdf-lib';
import { flateStream } from '../writer/flate.ts';
import { type PdfRevision, PdfStructureError, markDirty } from '../writer/pdf-revision.ts';
import { type PageCanvas, num } from './canvas.ts';

export const A4: readonly [number, number] = [595.28, 841.89];

/** Appends a new page drawn by the canvas at the end of the document (as a kid of the root page-tree node). */
export function appendPage(
  revision: PdfRevision,
  canvas: PageCanvas,
  size: readonly [number, number] = A4,
): PDFRef {
  const { context } = revision;
  const rootRef = revision.doc.catalog.get(PDFName.of('Pages'));
  if (!(rootRef instanceof PDFRef))
    throw new PdfStructureError('the page tree root is not an indirect object');
  const root = context.lookup(rootRef, PDFDict);

  const resources = context.obj({});
  canvas.writeResources(context, resources);
  const contents = context.register(flateStream(context, canvas.content()));
  const pageRef = context.register(
    context.obj({
      Type: 'Page',
      Parent: rootRef,
      MediaBox: [0, 0, size[0], size[1]],
      Resources: resources,
      Contents: contents,
    }),
  );

  const kidsEntry = root.get(PDFName.of('Kids'));
  const kids = context.lookup(kidsEntry);
  if (!(kids instanceof PDFArray)) throw new PdfStructureError('the page tree root has no kids');
  kids.push(pageRef);
  if (kidsEntry instanceof PDFRef) markDirty(revision, kidsEntry);
  const count = context.lookup(root.get(PDFName.of('Count')));
  root.set(PDFName.of('Count'), PDFNumber.of((count instanceof PDFNumber ? count.asNumber() : 0) + 1));
  markDirty(revision, rootRef);
  return pageRef;
}

/** The visible box of a page (CropBox within MediaBox, inherited as needed) and its rotation. */
export function pageGeometry(
  page: PDFDict,
  context: PDFContext,
): { box: [number, number, number, number]; rotate: 0 | 90 | 180 | 270 } {
  const inherited = (key: string) => {
    let node: PDFDict | undefined = page;
    for (let depth = 0; node && depth < 64; depth++) {
      const v = node.lookup(PDFName.of(key));
      if (v !== undefined) return v;
      const parent: PDFObject | undefined = node.lookup(PDFName.of('Parent'));
      node = parent instanceof PDFDict ? parent : undefined;
    }
    return undefined;
  };
  const asBox = (v: unknown): [number, number, number, number] | undefined => {
    if (!(v instanceof PDFArray) || v.size() !== 4) return undefined;
    const n = [0, 1, 2, 3].map((i) => context.lookup(v.get(i)));
    if (!n.every((x) => x instanceof PDFNumber)) return undefined;
    const [a, b, c, d] = n.map((x) => x.asNumber()) as [number, number, number, number];
    return [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
  };
  const media = asBox(inherited('MediaBox')) ?? [0, 0, A4[0], A4[1]];
  const crop = asBox(inherited('CropBox'));
  const box: [number, number, number, number] = crop
    ? [
        Math.max(media[0], crop[0]),
        Math.max(media[1], crop[1]),
        Math.min(media[2], crop[2]),
        Math.min(media[3], crop[3]),
      ]
    : media;
  const r = inherited('Rotate');
  const deg = r instanceof PDFNumber ? (((Math.round(r.asNumber() / 90) * 90) % 360) + 360) % 360 : 0;
  return { box, rotate: deg as 0 | 90 | 180 | 270 };
}

/** Size of the page as a person sees it (rotation applied). */
export function displaySize(geometry: ReturnType<typeof pageGeometry>): [number, number] {
  const w = geometry.box[2] - geometry.box[0];
  const h = geometry.box[3] - geometry.box[1];
  return geometry.rotate === 90 || geometry.rotate === 270 ? [h, w] : [w, h];
}

/**
 * The matrix from display coordinates (origin at the bottom left of the page as shown, x right, y up) to the
 * page's user space, so marks placed by display coordinates appear upright on rotated pages.
 */
export function displayToUserMatrix(geometry: ReturnType<typeof pageGeometry>): string {
  const [x1, y1, x2, y2] = geometry.box;
  switch (geometry.rotate) {
    case 90:
      return `0 1 -1 0 ${num(x2)} ${num(y1)} cm`;
    case 180:
      return `-1 0 0 -1 ${num(x2)} ${num(y2)} cm`;
    case 270:
      return `0 -1 1 0 ${num(x1)} ${num(y2)} cm`;
    default:
      return `1 0 0 1 ${num(x1)} ${num(y1)} cm`;
  }
}

/**
 * Draws the canvas over an existing page. The canvas becomes a form XObject with its own resources, so its names
 * cannot clash with the page's; the page's content streams are kept byte for byte, bracketed by q/Q so their
 * graphics state cannot leak into the overlay, and the page gets its own copy of its resources dictionary so
 * dictionaries shared with other pages stay untouched.
 */
export function overlayOnPage(
  revision: PdfRevision,
  pageRef: PDFRef,
  canvas: PageCanvas,
  matrix: string,
  bbox: readonly [number, number],
): void {
  const { context } = revision;
  const page = context.lookup(pageRef, PDFDict);
  const rawContents = page.get(PDFName.of('Contents'));
  const existing = context.lookup(rawContents);
  const streams: PDFRef[] = [];
  if (rawContents instanceof PDFRef && existing instanceof PDFStream) streams.push(rawContents);
  else if (existing instanceof PDFArray) {
    for (const item of existing.asArray()) if (item instanceof PDFRef) streams.push(item);
  }

  let resources: PDFDict | undefined;
  for (let node: PDFDict | undefined = page, depth = 0; node && depth < 64; depth++) {
    const r = node.lookup(PDFName.of('Resources'));
    if (r instanceof PDFDict) {
      resources = r;
      break;
    }
    const parent: PDFObject | undefined = node.lookup(PDFName.of('Parent'));
    node = parent instanceof PDFDict ? parent : undefined;
  }
  const formResources = context.obj({});
  canvas.writeResources(context, formResources);
  const form = context.register(
    flateStream(context, canvas.content(), {
      Type: 'XObject',
      Subtype: 'Form',
      BBox: [0, 0, bbox[0], bbox[1]],
      Resources: formResources,
    }),
  );

  const ownResources = resources ? resources.clone(context) : context.obj({});
  const xobjectsEntry = ownResources.lookup(PDFName.of('XObject'));
  const xobjects = xobjectsEntry instanceof PDFDict ? xobjectsEntry.clone(context) : context.obj({});
  let n = 1;
  while (xobjects.has(PDFName.of(`WqMark${n}`))) n++;
  xobjects.set(PDFName.of(`WqMark${n}`), form);
  ownResources.set(PDFName.of('XObject'), xobjects);
  page.set(PDFName.of('Resources'), ownResources);

  const open = context.register(flateStream(context, 'q\n'));
  const overlay = context.register(flateStream(context, `Q\nq\n${matrix}\n/WqMark${n} Do\nQ\n`));
  page.set(PDFName.of('Contents'), context.obj([open, ...streams, overlay]));
  markDirty(revision, pageRef);
}
