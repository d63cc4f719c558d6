// The approval page's script: renders the PDF with pdf.js, captures a drawn or typed signature or a stamp,
// and posts the approver's decision. No build step: a plain ES module served as is.
const data = JSON.parse(document.getElementById('approval-data').textContent);
const $ = (id) => document.getElementById(id);

async function renderPdf() {
  const status = $('pdf-status');
  try {
    const pdfjs = await import(`${data.assets}/pdf.min.mjs`);
    pdfjs.GlobalWorkerOptions.workerSrc = `${data.assets}/pdf.worker.min.mjs`;
    const pdf = await pdfjs.getDocument({
      url: `${data.base}/document.pdf`,
      isEvalSupported: false,
      standardFontDataUrl: `${data.assets}/standard_fonts/`,
    }).promise;
    const container = $('pdf-pages');
    const width = Math.min(container.clientWidth || 600, 900);
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const unscaled = page.getViewport({ scale: 1 });
      const viewport = page.getViewport({ scale: (width / unscaled.width) * (window.devicePixelRatio || 1) });
      const canvas = document.createElement('canvas');
      canvas.width = viewport.width;
      canvas.height = viewport.height;
      canvas.style.width = '100%';
      canvas.setAttribute('aria-label', `${n} / ${pdf.numPages}`);
      container.appendChild(canvas);
      await page.render({ canvasContext: canvas.getContext('2d'), viewport }).promise;
    }
    status.textContent = `${pdf.numPages} ${data.strings.pages}`;
  } catch (err) {
    console.error(err);
    status.hidden = true; // the "Open the PDF" link below still works
  }
}

function signaturePad(canvas) {
  const ctx = canvas.getContext('2d');
  ctx.lineWidth = 3;
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.strokeStyle = '#0b2a6f';
  let drawing = false;
  let drawn = false;
  const point = (e) => {
    const r = canvas.getBoundingClientRect();
    return [
      ((e.clientX - r.left) * canvas.width) / r.width,
      ((e.clientY - r.top) * canvas.height) / r.height,
    ];
  };
  canvas.addEventListener('pointerdown', (e) => {
    drawing = true;
    canvas.setPointerCapture(e.pointerId);
    ctx.beginPath();
    ctx.moveTo(...point(e));
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drawing) return;
    ctx.lineTo(...point(e));
    ctx.stroke();
    drawn = true;
  });
  const end = () => (drawing = false);
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  return {
    isEmpty: () => !drawn,
    clear() {
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      drawn = false;
    },
    toPng: () => canvas.toDataURL('image/png'),
  };
}

/** A chosen stamp image (PNG or JPEG) as a PNG data URL, at most 1200 px on its long side. */
function imageToPng(file) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const scale = Math.min(1, 1200 / Math.max(img.width, img.height));
      const c = document.createElement('canvas');
      c.width = Math.round(img.width * scale);
      c.height = Math.round(img.height * scale);
      c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
      URL.revokeObjectURL(img.src);
      resolve(c.toDataURL('image/png'));
    };
    img.onerror = reject;
    img.src = URL.createObjectURL(file);
  });
}

function showError(message) {
  const el = $('form-error');
  el.textContent = message;
  el.hidden = false;
}

async function post(path, body) {
  // The page's language goes along, so a refusal (a damaged image, say) is explained in it.
  const res = await fetch(`${data.base}/${path}?lang=${data.lang}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  let payload = {};
  try {
    payload = await res.json();
  } catch {
    /* not JSON */
  }
  return { status: res.status, payload };
}

function finish(text) {
  for (const id of ['approve-form', 'reject-form'])
    $(id)?.closest('form, details')?.setAttribute('hidden', '');
  document.querySelector('details.reject')?.setAttribute('hidden', '');
  $('delegate-step')?.setAttribute('hidden', '');
  $('approve-form').hidden = true;
  $('done-text').textContent = text;
  $('done').hidden = false;
  $('done').focus();
}

function explain({ status, payload }) {
  if (status === 410) return data.strings.gone;
  if (status === 403 && data.code) return data.code.needed;
  if (status === 409) return data.strings.conflict;
  const details = payload?.error?.details;
  if (status === 422 && details) return Object.values(details).flat().join(' ');
  return payload?.error?.message || data.strings.generic;
}

const pad = $('signature-pad') ? signaturePad($('signature-pad')) : undefined;
$('clear-signature')?.addEventListener('click', () => pad?.clear());
let stampPng;
$('stamp-file')?.addEventListener('change', async (e) => {
  const file = e.target.files?.[0];
  if (!file) return;
  stampPng = await imageToPng(file);
  const preview = $('stamp-preview');
  preview.src = stampPng;
  preview.hidden = false;
  $('generated-seal').checked = false;
});

$('approve-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const body = {};
  if (data.actionType === 'sign') {
    const typed = $('typed-name').value.trim();
    if (pad && !pad.isEmpty()) body.signature_png = pad.toPng();
    else if (typed) body.typed_name = typed;
    else return showError(data.strings.needSignature);
  } else if (data.actionType === 'stamp') {
    if ($('generated-seal').checked) body.generated_seal = true;
    else if (stampPng) body.stamp_png = stampPng;
    else return showError(data.strings.needStamp);
  }
  $('submit-action').disabled = true;
  const result = await post('complete', body);
  $('submit-action').disabled = false;
  if (result.status === 200) return finish(data.strings.doneCompleted);
  showError(explain(result));
  // A refused image is to be drawn or chosen again: start from an empty pad or no chosen file.
  const refused = result.status === 422 ? (result.payload?.error?.details ?? {}) : {};
  if (refused.signature_png) pad?.clear();
  if (refused.stamp_png) {
    stampPng = undefined;
    $('stamp-preview').hidden = true;
    $('stamp-file').value = '';
  }
});

$('reject-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  $('submit-reject').disabled = true;
  const result = await post('reject', { reason: $('reject-reason').value.trim() || undefined });
  $('submit-reject').disabled = false;
  if (result.status === 200) finish(data.strings.doneRejected);
  else showError(explain(result));
});

// Delegation (issue 15 item 3): the approver hands their step to someone else (name, WhatsApp number, reason).
function delegateError(message) {
  const el = $('delegate-error');
  el.textContent = message;
  el.hidden = !message;
}

$('delegate-form')?.addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = $('delegate-name').value.trim();
  const phone = $('delegate-phone').value.trim();
  const reason = $('delegate-reason').value.trim();
  if (!name) return delegateError(data.delegate.needName);
  if (!/^[+0-9][0-9 ().-]{5,22}$/.test(phone)) return delegateError(data.delegate.badPhone);
  if (!reason) return delegateError(data.delegate.needReason);
  $('submit-delegate').disabled = true;
  const result = await post('delegate', { name, phone, reason });
  $('submit-delegate').disabled = false;
  if (result.status === 200) {
    delegateError('');
    return finish(data.delegate.done.replace('{name}', name));
  }
  // The server words every refusal of this step in the page's language (who it is delegated to, a delegation
  // still being recorded, not their turn): shown as it comes, rather than the generic conflict or gone text.
  const refusal = [404, 409, 410].includes(result.status) ? result.payload?.error?.message : undefined;
  delegateError(refusal || explain(result));
});

// Verified approvers (issue 15 item 2): a 6-digit code sent over WhatsApp comes first; a right one sets an
// HttpOnly cookie for this link, and the approve and reject forms appear.
function codeProblem({ status, payload }) {
  const details = payload?.error?.details?.code;
  if (status === 422 && details && /expired/.test(details.join(' '))) return data.code.expired;
  if (status === 422) return data.code.wrong;
  if (status === 429) return data.code.tooMany;
  if (status === 502) return data.code.sendFailed;
  if (status === 409) return data.code.expired;
  if (status === 410) return data.strings.gone;
  return data.strings.generic;
}

function codeError(message) {
  const el = $('code-error');
  el.textContent = message;
  el.hidden = !message;
}

if ($('code-step')) {
  $('send-code').addEventListener('click', async () => {
    $('send-code').disabled = true;
    const result = await post('code', {});
    $('send-code').disabled = false;
    if (result.status !== 200) return codeError(codeProblem(result));
    codeError('');
    $('send-code').textContent = data.code.resend;
    $('code-sent').hidden = false;
    $('code-form').hidden = false;
    $('otp-code').focus();
  });
  $('code-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const code = $('otp-code').value.replace(/\D/g, '');
    if (code.length !== 6) return codeError(data.code.wrong);
    $('verify-code').disabled = true;
    const result = await post('code/verify', { code });
    $('verify-code').disabled = false;
    if (result.status !== 200) {
      $('otp-code').value = '';
      return codeError(codeProblem(result));
    }
    $('code-step').hidden = true;
    $('approve-form').hidden = false;
    document.querySelector('details.reject').hidden = false;
    if ($('delegate-step')) $('delegate-step').hidden = false;
    // The PDF is served only once the code is verified: shown now.
    document.querySelector('section.viewer').hidden = false;
    void renderPdf();
  });
} else {
  void renderPdf();
}
