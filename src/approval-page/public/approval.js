// The approval page's script: shows the PDF (pdf-viewer.js), captures a drawn or typed signature
// (signature-pad.js) or a stamp, and posts the approver's decision; for a verified approver, asks for the WhatsApp
// code first. No build step: plain ES modules served as they are, under fingerprinted names given in the page's
// data (so the other modules are imported by those URLs, not by relative paths).
const data = JSON.parse(document.getElementById('approval-data').textContent);
const $ = (id) => document.getElementById(id);

/** The document, drawn by the viewer module (pdf-viewer.js) with pdf.js, both loaded from this origin. */
async function showDocument() {
  const status = $('pdf-status');
  try {
    const [{ openViewer }, pdfjs] = await Promise.all([
      import(data.assets.viewer),
      import(data.assets.pdfjs),
    ]);
    await openViewer({
      pdfjs,
      url: `${data.base}/document.pdf`,
      assets: data.assets,
      pdfBytes: data.pdfBytes,
      strings: { ...data.viewer, pages: data.strings.pages },
      elements: {
        pages: $('pdf-pages'),
        loading: $('pdf-loading'),
        status,
        progress: $('pdf-progress'),
        zoomIn: $('zoom-in'),
        zoomOut: $('zoom-out'),
        zoomLevel: $('zoom-level'),
        indicator: $('page-indicator'),
      },
    });
  } catch (err) {
    console.error(err);
    // The "Open the PDF" link below the viewer still works.
    $('pdf-progress').hidden = true;
    status.textContent = data.viewer.failed;
  }
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

/** The approver's action: a drawn or typed signature, a stamp image or the generated seal, or nothing. */
async function wireAction() {
  let pad;
  $('clear-signature')?.addEventListener('click', () => pad?.clear());
  $('undo-signature')?.addEventListener('click', () => pad?.undo());
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
  // The pad's module last: the form already answers (a typed name still signs) should it not load.
  if ($('signature-pad')) {
    const module = await import(data.assets.pad).catch((err) => console.error(err));
    pad = module?.signaturePad($('signature-pad'));
  }
}

/** Rejection, with an optional reason; and delegation, when the page offers it. */
function wireRejectAndDelegate() {
  $('reject-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('submit-reject').disabled = true;
    const result = await post('reject', { reason: $('reject-reason').value.trim() || undefined });
    $('submit-reject').disabled = false;
    if (result.status === 200) finish(data.strings.doneRejected);
    else showError(explain(result));
  });

  // Delegation: the approver hands their step to someone else (name, WhatsApp number, reason).
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
}

// Verified approvers: a 6-digit code sent over WhatsApp comes first; a right one sets an HttpOnly cookie for this
// link, and the page is loaded again, now with the document and the approver's action.
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
    // Verified: the server now renders the whole page (document, action) for this link.
    window.location.reload();
  });
} else {
  void showDocument();
  wireRejectAndDelegate();
  await wireAction();
}
