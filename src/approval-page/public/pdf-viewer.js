// The approval page's document viewer, built for phones. pdf.js draws a page only when it comes within a screen of
// the viewport and its canvas is released (sized 0 × 0, so the browser frees it) once it is three screens away,
// under a fixed budget of canvas memory: a 200-page contract at devicePixelRatio 3 holds a few pages' pixels, not
// 200. Zoom (buttons and pinch) redraws the visible pages at the new scale. Each drawn page has a text layer, so
// its text can be selected and read by a screen reader.

/** One canvas's pixels at most: 4 M pixels, 16 MB. A bigger page (zoomed in) is drawn finer than the screen needs no more. */
const MAX_CANVAS_PIXELS = 4 * 1024 * 1024;
/** The drawn pages' canvases together: the oldest far ones are released to stay under it. */
const CANVAS_BUDGET_BYTES = 56 * 1024 * 1024;
const DRAW_MARGIN = '100% 0px';
const KEEP_MARGIN = '300% 0px';
const ZOOM_MIN = 1;
const ZOOM_MAX = 4;
const ZOOM_STEP = 1.25;

const bytesOf = (canvas) => (canvas ? canvas.width * canvas.height * 4 : 0);
const free = (canvas) => {
  canvas.width = 0;
  canvas.height = 0;
  canvas.remove();
};

/**
 * Loads the PDF at `url` into `elements.pages` and returns once the first page is drawn.
 * `assets`: the URLs of pdf.js's worker, its standard font data and cMaps, all on this origin.
 */
export async function openViewer({ pdfjs, url, assets, pdfBytes, elements, strings }) {
  pdfjs.GlobalWorkerOptions.workerSrc = assets.worker;
  const task = pdfjs.getDocument({
    url,
    isEvalSupported: false,
    // The standard 14 fonts (Helvetica, Times, Courier, …) are drawn from pdf.js's own font data, never from the
    // phone's fonts: a phone's stand-in has other glyph shapes and widths, and text comes out bunched and spread.
    useSystemFonts: false,
    standardFontDataUrl: assets.standardFonts,
    cMapUrl: assets.cMaps,
    cMapPacked: true,
  });
  task.onProgress = ({ loaded, total }) => {
    const all = total || pdfBytes;
    if (all) elements.progress.value = Math.min(100, Math.round((loaded * 100) / all));
  };
  const pdf = await task.promise;
  elements.progress.value = 100;
  const viewer = createViewer(pdfjs, pdf, elements, strings);
  await viewer.firstDrawn;
  elements.loading.hidden = true;
  elements.status.textContent = `${pdf.numPages} ${strings.pages}`;
  return viewer;
}

/** The viewer's state: the document, one slot per page, the pages near the screen, the zoom. */
function createViewer(pdfjs, pdf, elements, strings) {
  let firstDrawn;
  const state = {
    pdfjs,
    pdf,
    elements,
    container: elements.pages,
    zoom: 1,
    baseWidth: elements.pages.clientWidth || 360,
    near: new Set(),
    firstDrawn: new Promise((resolve) => (firstDrawn = resolve)),
    onDrawn: () => firstDrawn(),
    pumping: false,
    ...createSlots(elements.pages, pdf.numPages, strings),
  };
  setWidth(state);
  observePages(state);
  // The other pages' own shapes, once the first page is on screen.
  void state.firstDrawn.then(async () => {
    for (const slot of state.slots.slice(1)) fit(slot, await pdf.getPage(slot.n));
  });
  elements.zoomIn.addEventListener('click', () => setZoom(state, state.zoom * ZOOM_STEP));
  elements.zoomOut.addEventListener('click', () => setZoom(state, state.zoom / ZOOM_STEP));
  pinchToZoom(
    state.container,
    () => state.zoom,
    (next, focus) => setZoom(state, next, focus),
  );
  followResize(state);
  showPageInView(state);
  return { firstDrawn: state.firstDrawn, setZoom: (z) => setZoom(state, z), zoom: () => state.zoom };
}

/** One empty, labelled element per page, in order. */
function createSlots(container, total, strings) {
  const slots = [];
  const bySlot = new Map();
  for (let n = 1; n <= total; n++) {
    const el = document.createElement('div');
    el.className = 'pdf-page';
    el.dataset.page = String(n);
    el.dataset.state = 'empty';
    el.setAttribute('role', 'group');
    el.setAttribute('aria-label', strings.page.replace('{n}', String(n)).replace('{total}', String(total)));
    const slot = {
      n,
      el,
      canvas: null,
      drawnAt: null,
      failedAt: null,
      task: null,
      text: null,
      textDiv: null,
    };
    slots.push(slot);
    bySlot.set(el, slot);
  }
  container.append(...slots.map((s) => s.el));
  return { slots, bySlot };
}

const setWidth = (state) =>
  state.container.style.setProperty('--page-width', `${Math.floor(state.baseWidth * state.zoom)}px`);

/** A page's shape; every page takes the first page's until its own is known. */
function fit(slot, page) {
  const { width, height } = page.getViewport({ scale: 1 });
  slot.el.style.aspectRatio = `${width} / ${height}`;
}

/** What a page drawn now would be drawn at: its width on screen and the screen's density. */
const drawKey = (slot) => `${slot.el.clientWidth}@${window.devicePixelRatio || 1}`;
const distance = (slot) => {
  const r = slot.el.getBoundingClientRect();
  return Math.abs((r.top + r.bottom) / 2 - window.innerHeight / 2);
};

function release(slot) {
  slot.task?.cancel();
  slot.task = null;
  if (slot.canvas) free(slot.canvas);
  slot.canvas = null;
  slot.drawnAt = null;
  if (slot.text) {
    slot.text.cancel();
    slot.textDiv.remove();
    slot.text = null;
    slot.textDiv = null;
  }
  slot.el.dataset.state = 'empty';
}

/** Releases the drawn pages farthest from the screen, never a near one, until `bytes` more fit the budget. */
function makeRoom(state, drawing, bytes) {
  const drawn = state.slots.filter((s) => s.canvas && s !== drawing);
  let used = drawn.reduce((sum, s) => sum + bytesOf(s.canvas), bytesOf(drawing.canvas));
  const far = drawn.filter((s) => !state.near.has(s)).sort((a, b) => distance(b) - distance(a));
  for (const slot of far) {
    if (used + bytes <= CANVAS_BUDGET_BYTES) break;
    used -= bytesOf(slot.canvas);
    release(slot);
  }
}

/** Draws page `slot` at its width on screen into a new canvas, which replaces the old one once complete. */
async function draw(state, slot) {
  const key = drawKey(slot);
  const page = await state.pdf.getPage(slot.n);
  fit(slot, page);
  const unscaled = page.getViewport({ scale: 1 });
  const viewport = page.getViewport({ scale: slot.el.clientWidth / unscaled.width });
  const density = window.devicePixelRatio || 1;
  const outputScale = Math.min(density, Math.sqrt(MAX_CANVAS_PIXELS / (viewport.width * viewport.height)));
  const canvas = document.createElement('canvas');
  const width = Math.floor(viewport.width * outputScale);
  const height = Math.floor(viewport.height * outputScale);
  makeRoom(state, slot, width * height * 4);
  canvas.width = width;
  canvas.height = height;
  canvas.setAttribute('aria-hidden', 'true');
  slot.el.dataset.state = slot.canvas ? 'redrawing' : 'drawing';
  const task = page.render({
    canvasContext: canvas.getContext('2d', { alpha: false }),
    viewport,
    transform: outputScale === 1 ? undefined : [outputScale, 0, 0, outputScale, 0, 0],
  });
  slot.task = task;
  try {
    await task.promise;
  } catch (err) {
    free(canvas);
    if (slot.el.dataset.state !== 'empty') slot.el.dataset.state = slot.canvas ? 'drawn' : 'empty';
    throw err;
  } finally {
    if (slot.task === task) slot.task = null;
  }
  // The old drawing (at the previous zoom) stays on screen until the new one is complete.
  if (slot.canvas) free(slot.canvas);
  slot.canvas = canvas;
  slot.drawnAt = key;
  slot.el.style.setProperty('--scale-factor', String(viewport.scale));
  slot.el.prepend(canvas);
  slot.el.dataset.state = 'drawn';
  state.onDrawn();
  if (slot.text) slot.text.update({ viewport });
  else addTextLayer(state, slot, page, viewport);
}

/** pdf.js's text layer over the drawing: transparent text in place, to select and to be read aloud. */
function addTextLayer(state, slot, page, viewport) {
  const div = document.createElement('div');
  div.className = 'textLayer';
  slot.el.append(div);
  const layer = new state.pdfjs.TextLayer({
    textContentSource: page.streamTextContent(),
    container: div,
    viewport,
  });
  slot.text = layer;
  slot.textDiv = div;
  layer.render().catch(() => {
    /* cancelled when the page was released */
  });
}

/** Draws the near pages that are not drawn at the current scale, the one nearest the screen's middle first. */
async function pump(state) {
  if (state.pumping) return;
  state.pumping = true;
  try {
    for (;;) {
      const next = [...state.near]
        .filter((s) => s.drawnAt !== drawKey(s) && s.failedAt !== drawKey(s))
        .sort((a, b) => distance(a) - distance(b))[0];
      if (!next) break;
      await draw(state, next).catch((err) => {
        if (err?.name === 'RenderingCancelledException') return;
        console.error(err);
        next.failedAt = drawKey(next);
      });
    }
  } finally {
    state.pumping = false;
  }
}

/** Pages coming within a screen are drawn; pages three screens away are released. */
function observePages(state) {
  const drawObserver = new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        const slot = state.bySlot.get(e.target);
        if (e.isIntersecting) state.near.add(slot);
        else state.near.delete(slot);
      }
      void pump(state);
    },
    { rootMargin: DRAW_MARGIN },
  );
  const keepObserver = new IntersectionObserver(
    (entries) => {
      for (const e of entries) if (!e.isIntersecting) release(state.bySlot.get(e.target));
    },
    { rootMargin: KEEP_MARGIN },
  );
  void state.pdf.getPage(1).then((first) => {
    for (const s of state.slots) fit(s, first);
    for (const s of state.slots) {
      drawObserver.observe(s.el);
      keepObserver.observe(s.el);
    }
  });
}

/** Zooms to `next`, keeping the point under `focus` (client coordinates; the screen's middle by default) still. */
function setZoom(state, next, focus) {
  const { container, elements } = state;
  const clamped = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, Math.round(next * 100) / 100));
  if (clamped === state.zoom) return;
  const fx = focus?.x ?? window.innerWidth / 2;
  const fy = focus?.y ?? window.innerHeight / 2;
  const before = container.getBoundingClientRect();
  const x = container.scrollLeft + (fx - before.left);
  const y = fy - before.top;
  const ratio = clamped / state.zoom;
  state.zoom = clamped;
  setWidth(state);
  container.scrollLeft = x * ratio - (fx - before.left);
  const after = container.getBoundingClientRect();
  window.scrollBy(0, after.top + y * ratio - fy);
  elements.zoomLevel.textContent = `${Math.round(state.zoom * 100)}%`;
  elements.zoomOut.disabled = state.zoom <= ZOOM_MIN;
  elements.zoomIn.disabled = state.zoom >= ZOOM_MAX;
  void pump(state);
}

/** A turned phone (portrait, landscape) or a resized window: pages take the new width and are drawn again. */
function followResize(state) {
  let timer;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const width = state.container.clientWidth;
      if (!width || width === state.baseWidth) return;
      state.baseWidth = width;
      setWidth(state);
      void pump(state);
    }, 150);
  });
}

/** Which page is in the middle of the screen, in the bar ("3 / 30"). */
function showPageInView(state) {
  const total = state.slots.length;
  let frame = 0;
  const show = () => {
    frame = 0;
    const el = document.elementFromPoint(window.innerWidth / 2, window.innerHeight / 2)?.closest('.pdf-page');
    const slot = el && state.bySlot.get(el);
    if (slot) state.elements.indicator.textContent = `${slot.n} / ${total}`;
  };
  window.addEventListener('scroll', () => (frame ||= requestAnimationFrame(show)), { passive: true });
  state.elements.indicator.textContent = `1 / ${total}`;
}

/**
 * Two fingers on the pages scale them at once (a CSS transform, no drawing), and on release the zoom is set and the
 * visible pages are drawn again at it. One finger still scrolls: the pages' touch-action is pan-x pan-y.
 */
function pinchToZoom(container, currentZoom, setZoom) {
  let pinch = null;
  const spread = (t) => Math.hypot(t[0].clientX - t[1].clientX, t[0].clientY - t[1].clientY);
  const middle = (t) => ({ x: (t[0].clientX + t[1].clientX) / 2, y: (t[0].clientY + t[1].clientY) / 2 });
  container.addEventListener(
    'touchstart',
    (e) => {
      if (e.touches.length !== 2) return;
      const r = container.getBoundingClientRect();
      const mid = middle(e.touches);
      pinch = { start: spread(e.touches), zoom: currentZoom(), mid, scale: 1 };
      container.style.transformOrigin = `${mid.x - r.left}px ${mid.y - r.top}px`;
    },
    { passive: true },
  );
  container.addEventListener(
    'touchmove',
    (e) => {
      if (!pinch || e.touches.length !== 2) return;
      e.preventDefault();
      pinch.scale = spread(e.touches) / pinch.start;
      container.style.transform = `scale(${pinch.scale})`;
    },
    { passive: false },
  );
  const end = (e) => {
    if (!pinch || e.touches.length >= 2) return;
    const { zoom, scale, mid } = pinch;
    pinch = null;
    container.style.transform = '';
    setZoom(zoom * scale, mid);
  };
  container.addEventListener('touchend', end);
  container.addEventListener('touchcancel', end);
}
