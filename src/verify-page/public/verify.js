// The verification page's script: tells whether a PDF the visitor drops (or chooses) is this document's signed
// file, byte for byte, by its SHA-256. Computed in the browser with Web Crypto, so the file stays on the device;
// where Web Crypto is missing (a page served over plain HTTP is not a secure context), the file is posted to
// /v/{token}/check, which hashes it and keeps nothing. No build step: a plain ES module served as is.
const data = JSON.parse(document.getElementById('verify-data').textContent);
const $ = (id) => document.getElementById(id);

const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
const canHashHere = () =>
  Boolean(globalThis.isSecureContext && globalThis.crypto && globalThis.crypto.subtle);

async function verdictOf(file) {
  if (canHashHere()) {
    const sha256 = hex(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
    const result =
      sha256 === data.signedSha256 ? 'signed' : sha256 === data.originalSha256 ? 'original' : 'different';
    return { result, sha256 };
  }
  const res = await fetch(data.checkUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream' },
    body: file,
  });
  const body = await res.json().catch(() => null);
  if (res.status === 413) throw Object.assign(new Error('too large'), { tooLarge: true });
  if (!res.ok || !body || !body.success) throw new Error(`check failed: ${res.status}`);
  return body.data;
}

let current = 0;
async function check(file) {
  if (!file) return;
  const run = ++current;
  const box = $('verdict');
  box.hidden = false;
  box.className = 'checking';
  $('verdict-text').textContent = data.strings.checking;
  $('verdict-sha256').textContent = '';
  try {
    if (file.size > data.maxBytes && !canHashHere())
      throw Object.assign(new Error('too large'), { tooLarge: true });
    const { result, sha256 } = await verdictOf(file);
    if (run !== current) return; // a newer file was dropped meanwhile
    box.className = result === 'signed' ? 'verdict match' : 'verdict differs';
    box.dataset.result = result;
    $('verdict-text').textContent = data.strings[result];
    $('verdict-sha256').textContent = sha256;
  } catch (err) {
    if (run !== current) return;
    console.error(err);
    box.className = 'verdict error';
    box.dataset.result = 'error';
    $('verdict-text').textContent = err && err.tooLarge ? data.strings.tooLarge : data.strings.failed;
  }
}

if (!canHashHere()) $('check-help').textContent = data.strings.helpServer;

const input = $('file-input');
input.addEventListener('change', () => {
  void check(input.files && input.files[0]);
  input.value = '';
});

const zone = $('drop-zone');
zone.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    input.click();
  }
});
for (const type of ['dragenter', 'dragover']) {
  zone.addEventListener(type, (e) => {
    e.preventDefault();
    zone.classList.add('over');
  });
}
zone.addEventListener('dragleave', () => zone.classList.remove('over'));
zone.addEventListener('drop', (e) => {
  e.preventDefault();
  zone.classList.remove('over');
  const files = e.dataTransfer && e.dataTransfer.files;
  void check(files && files[0]);
});
// A file dropped beside the zone must not make the browser navigate away to it.
for (const type of ['dragover', 'drop']) window.addEventListener(type, (e) => e.preventDefault());
