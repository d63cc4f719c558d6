// The signature pad: drawn with a finger, a pen or a mouse (pointer events, which phones raise for touches), one
// stroke per contact, with undo and clear. Strokes are kept as points, so undo redraws what is left.

const INK = '#0b2a6f';

/** @param {HTMLCanvasElement} canvas */
export function signaturePad(canvas) {
  const ctx = canvas.getContext('2d');
  /** @type {Array<Array<[number, number]>>} */
  const strokes = [];
  let current = null;
  let pointer = null;

  const style = () => {
    ctx.lineWidth = 3;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.strokeStyle = INK;
    ctx.fillStyle = INK;
  };
  const point = (e) => {
    const r = canvas.getBoundingClientRect();
    return [
      ((e.clientX - r.left) * canvas.width) / r.width,
      ((e.clientY - r.top) * canvas.height) / r.height,
    ];
  };
  const drawStroke = (stroke) => {
    const [first, ...rest] = stroke;
    if (rest.length === 0) {
      // A tap leaves a dot.
      ctx.beginPath();
      ctx.arc(first[0], first[1], ctx.lineWidth / 2, 0, Math.PI * 2);
      ctx.fill();
      return;
    }
    ctx.beginPath();
    ctx.moveTo(...first);
    for (const p of rest) ctx.lineTo(...p);
    ctx.stroke();
  };
  const redraw = () => {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    style();
    strokes.forEach(drawStroke);
  };
  style();

  canvas.addEventListener('pointerdown', (e) => {
    // A second finger on the pad (a pinch, a palm) does not start another line.
    if (pointer !== null || !e.isPrimary) return;
    e.preventDefault();
    pointer = e.pointerId;
    canvas.setPointerCapture(e.pointerId);
    current = [point(e)];
    strokes.push(current);
    drawStroke(current);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (e.pointerId !== pointer || !current) return;
    e.preventDefault();
    const events = typeof e.getCoalescedEvents === 'function' ? e.getCoalescedEvents() : [];
    for (const ev of events.length > 0 ? events : [e]) {
      const previous = current[current.length - 1];
      const next = point(ev);
      current.push(next);
      ctx.beginPath();
      ctx.moveTo(...previous);
      ctx.lineTo(...next);
      ctx.stroke();
    }
  });
  const end = (e) => {
    if (e.pointerId !== pointer) return;
    pointer = null;
    current = null;
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);

  return {
    isEmpty: () => strokes.length === 0,
    strokeCount: () => strokes.length,
    undo() {
      strokes.pop();
      redraw();
    },
    clear() {
      strokes.length = 0;
      redraw();
    },
    toPng: () => canvas.toDataURL('image/png'),
  };
}
