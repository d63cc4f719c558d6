import { createHash } from 'node:crypto';
import type { AdminContext } from './context.ts';

/**
 * The dashboard's only stylesheet and script. They live in this module (not in files beside it) so that the
 * compiled build needs no copy step; both are served from /admin/assets, which the CSP allows as 'self'.
 * The CSS uses logical properties (margin-inline-start, text-align: start) so one stylesheet serves both
 * directions.
 */
const CSS = `
:root {
  --ink: #1c2430; --muted: #5a6472; --line: #d9dee5; --bg: #f5f7fa; --card: #ffffff;
  --brand: #0b6e4f; --brand-dark: #084f39; --danger: #b42318; --danger-bg: #fdecea;
  --ok-bg: #e6f4ea; --ok: #1e6b34; --warn-bg: #fff4e0; --warn: #8a5300; --focus: #f0b400;
  --radius: 8px;
}
* { box-sizing: border-box; }
html { font-size: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink); line-height: 1.55;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", Tahoma, "DejaVu Sans", sans-serif;
}
:lang(ar) body, body:lang(ar) { font-family: "Noto Sans Arabic", "Segoe UI", Tahoma, "DejaVu Sans", system-ui, sans-serif; line-height: 1.7; }
a { color: var(--brand-dark); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 2px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 0.92em; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.skip-link { position: absolute; inset-inline-start: 1rem; top: -3rem; background: var(--card); padding: .5rem 1rem; z-index: 10; border-radius: var(--radius); }
.skip-link:focus { top: 1rem; }

.site-header { background: var(--card); border-bottom: 1px solid var(--line); }
.site-header .inner { max-width: 72rem; margin: 0 auto; padding: .75rem 1.25rem; display: flex; flex-wrap: wrap; align-items: center; gap: .75rem 1.5rem; }
.brand { font-weight: 700; font-size: 1.15rem; color: var(--brand-dark); text-decoration: none; }
.brand span { color: var(--muted); font-weight: 500; margin-inline-start: .35rem; }
.site-nav ul { list-style: none; display: flex; gap: .25rem; margin: 0; padding: 0; }
.site-nav a { display: inline-block; padding: .4rem .75rem; border-radius: var(--radius); text-decoration: none; color: var(--ink); }
.site-nav a:hover { background: var(--bg); }
.site-nav a[aria-current="page"] { background: var(--ok-bg); color: var(--brand-dark); font-weight: 600; }
.header-tools { margin-inline-start: auto; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; }
.who { color: var(--muted); font-size: .9rem; }
.header-tools form { margin: 0; }

main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
main:focus { outline: none; }
h1 { font-size: 1.75rem; margin: 0 0 .5rem; }
h2 { font-size: 1.25rem; margin: 0 0 .75rem; }
.lead { color: var(--muted); margin-top: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: 1.25rem; margin-block: 1.25rem; }

.notice { border-radius: var(--radius); padding: .75rem 1rem; margin-block: 1rem; border: 1px solid; }
.notice-ok { background: var(--ok-bg); color: var(--ok); border-color: #b7dfc2; }
.notice-error { background: var(--danger-bg); color: var(--danger); border-color: #f3b8b2; }
.notice-warn { background: var(--warn-bg); color: var(--warn); border-color: #f1d29b; }
.notice ul { margin: .25rem 0 0; padding-inline-start: 1.25rem; }

.field { margin-block: 1rem; }
label, legend { font-weight: 600; display: block; margin-bottom: .25rem; }
.hint { color: var(--muted); font-size: .9rem; margin: 0 0 .35rem; }
.error-text { color: var(--danger); font-weight: 600; margin: 0 0 .35rem; }
input[type="text"], input[type="email"], input[type="password"] {
  width: 100%; max-width: 28rem; font: inherit; padding: .55rem .7rem; border: 1px solid #9aa4b1; border-radius: 6px; background: #fff; color: var(--ink);
}
input[aria-invalid="true"] { border-color: var(--danger); border-width: 2px; }
input[readonly] { background: var(--bg); }
fieldset { border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem 1rem 1rem; margin: 1rem 0; }
fieldset[aria-invalid="true"] { border-color: var(--danger); }
.checkbox { display: flex; align-items: flex-start; gap: .6rem; margin-block: .45rem; }
.checkbox input { width: 1.15rem; height: 1.15rem; margin-top: .3rem; flex: none; }
.checkbox label { font-weight: 400; margin: 0; }
.checkbox code { color: var(--muted); }

.button { font: inherit; font-weight: 600; border-radius: 6px; padding: .55rem 1.1rem; cursor: pointer; border: 2px solid transparent; }
.button-primary { background: var(--brand); color: #fff; }
.button-primary:hover { background: var(--brand-dark); }
.button-secondary { background: #fff; color: var(--brand-dark); border-color: var(--brand); }
.button-danger { background: #fff; color: var(--danger); border-color: var(--danger); padding: .3rem .8rem; }
.button-danger:hover { background: var(--danger-bg); }
.button-link { background: none; border: none; padding: .25rem; color: var(--brand-dark); text-decoration: underline; font: inherit; cursor: pointer; }

.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: start; padding: .6rem .7rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; background: #fafbfc; }
tbody th { font-size: 1rem; color: var(--ink); background: none; }
tr.revoked td { color: var(--muted); }
td form { margin: 0; }
ul.plain { list-style: none; margin: 0; padding: 0; }

.badge { display: inline-block; padding: .1rem .55rem; border-radius: 999px; font-size: .82rem; font-weight: 600; background: var(--bg); border: 1px solid var(--line); white-space: nowrap; }
.badge-ok, .badge-approved { background: var(--ok-bg); color: var(--ok); border-color: #b7dfc2; }
.badge-off, .badge-rejected, .badge-failed, .badge-expired, .badge-voided { background: var(--danger-bg); color: var(--danger); border-color: #f3b8b2; }
.badge-completed, .badge-running { background: var(--ok-bg); color: var(--ok); border-color: #b7dfc2; }
.badge-paused_for_quota, .badge-queued { background: var(--warn-bg); color: var(--warn); border-color: #f1d29b; }
.badge-cancelled { background: var(--danger-bg); color: var(--danger); border-color: #f3b8b2; }
#bulk-progress progress { width: 100%; max-width: 36rem; height: 1rem; display: block; margin-block: .5rem; }
input[type="file"] { font: inherit; }
.badge-pending, .badge-in_progress, .badge-retrying { background: var(--warn-bg); color: var(--warn); border-color: #f1d29b; }

.status-counts { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .75rem; }
.status-counts li { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem 1rem; }
.status-counts .count { display: block; font-size: 1.6rem; font-weight: 700; }
.status-counts .total { background: var(--ok-bg); }
.progress { display: inline-flex; align-items: center; gap: .5rem; white-space: nowrap; }
progress { width: 5rem; height: .6rem; accent-color: var(--brand); }

.new-key { border: 2px solid var(--brand); background: #f3fbf7; }
.new-key:focus { outline: 3px solid var(--focus); }
.copy-row { display: flex; gap: .5rem; align-items: center; max-width: 44rem; }
.copy-row input { max-width: none; flex: 1; }
.copy-status { min-height: 1.5em; font-weight: 600; color: var(--ok); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1.25rem; margin: 0; }
dl.facts dt { color: var(--muted); font-weight: 600; }
dl.facts dd { margin: 0; }
.login { max-width: 26rem; margin: 2rem auto; }
.qr { display: block; width: 12rem; height: auto; border: 1px solid var(--line); }
.setup-key { font-size: 1.05rem; letter-spacing: .05em; word-break: break-all; }
ol.steps { list-style: none; margin: 0; padding: 0; }
ol.steps > li { margin-block: 1rem; }
dl.facts + h2 { margin-top: 1.5rem; }
#recovery-codes { width: 100%; max-width: 20rem; font: inherit; padding: .55rem .7rem; border: 1px solid #9aa4b1; border-radius: 6px; }
@media (max-width: 40rem) { .header-tools { margin-inline-start: 0; } dl.facts { grid-template-columns: 1fr; } }
`;

/**
 * Progressive enhancement only: the pages work without it. Reveals copy buttons and copies the named field;
 * asks before a revoke; moves focus to a freshly created key so screen readers announce it.
 */
const JS = `
(function () {
  'use strict';
  function announce(el, text) { if (el) { el.textContent = ''; setTimeout(function () { el.textContent = text; }, 30); } }
  document.querySelectorAll('[data-copy-target]').forEach(function (button) { button.hidden = false; });
  document.addEventListener('click', function (event) {
    var button = event.target instanceof Element ? event.target.closest('[data-copy-target]') : null;
    if (!button) return;
    var field = document.getElementById(button.getAttribute('data-copy-target'));
    var status = document.getElementById(button.getAttribute('data-copy-status'));
    if (!field) return;
    var done = function () { announce(status, button.getAttribute('data-copied')); };
    var fallback = function () {
      field.focus(); field.select();
      var ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      if (ok) done(); else announce(status, button.getAttribute('data-copy-failed'));
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(field.value).then(done, fallback);
    else fallback();
  });
  document.addEventListener('submit', function (event) {
    var form = event.target;
    var question = form instanceof HTMLFormElement ? form.getAttribute('data-confirm') : null;
    if (question && !window.confirm(question)) event.preventDefault();
  });
  var focusTarget = document.querySelector('[data-focus-on-load]');
  if (focusTarget) focusTarget.focus();

  // Bulk send: "Check the file" shows the findings in place, so the chosen file stays for "Start sending".
  var bulkForm = document.getElementById('bulk-send-form');
  if (bulkForm) bulkForm.addEventListener('click', function (event) {
    var button = event.target instanceof Element ? event.target.closest('[data-check]') : null;
    if (!button || !bulkForm.checkValidity()) return;
    event.preventDefault();
    var data = new FormData(bulkForm);
    data.set('intent', 'check');
    button.disabled = true;
    fetch(bulkForm.action, { method: 'POST', body: data, credentials: 'same-origin', headers: { 'x-requested-with': 'fetch' } })
      .then(function (res) { return res.text(); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, 'text/html').getElementById('check-results');
        var current = document.getElementById('check-results');
        if (fresh && current) current.replaceWith(document.importNode(fresh, true));
        else bulkForm.submit();
      })
      .catch(function () { bulkForm.submit(); })
      .finally(function () { button.disabled = false; });
  });

  // Bulk send progress: read the counts every two seconds while the bulk send is open.
  var progress = document.querySelector('[data-progress-url]');
  if (progress) {
    var lang = document.documentElement.lang === 'ar' ? 'ar-u-nu-latn' : 'en-GB';
    var number = function (n) { return Number(n).toLocaleString(lang); };
    var open = ['queued', 'running', 'paused_for_quota'];
    var poll = function () {
      fetch(progress.getAttribute('data-progress-url'), { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (data) {
          if (!data) return setTimeout(poll, 4000);
          var c = data.counts;
          var done = c.sent + c.failed + c.invalid + c.cancelled;
          var bar = progress.querySelector('progress');
          bar.max = c.rows; bar.value = done;
          progress.querySelector('[data-progress-text]').textContent = progress.getAttribute('data-of-template')
            .replace('{done}', number(done)).replace('{total}', number(c.rows));
          progress.querySelectorAll('[data-count]').forEach(function (el) { el.textContent = number(c[el.getAttribute('data-count')]); });
          var badge = progress.querySelector('[data-status]');
          badge.textContent = progress.getAttribute('data-label-' + data.status.replace(/_/g, '-')) || data.status;
          badge.className = 'badge badge-' + data.status;
          progress.querySelector('[data-paused]').hidden = data.status !== 'paused_for_quota';
          if (open.indexOf(data.status) !== -1) setTimeout(poll, 2000);
          else document.querySelectorAll('form[action$="/cancel"]').forEach(function (f) { f.hidden = true; });
        })
        .catch(function () { setTimeout(poll, 4000); });
    };
    setTimeout(poll, 1000);
  }
})();
`;

interface Asset {
  body: string;
  type: string;
  version: string;
}

const version = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

export const ASSETS: Record<'admin.css' | 'admin.js', Asset> = {
  'admin.css': { body: CSS, type: 'text/css; charset=utf-8', version: version(CSS) },
  'admin.js': { body: JS, type: 'text/javascript; charset=utf-8', version: version(JS) },
};

/** GET /admin/assets/<name>: public, cached for a year when the URL carries the current version. */
export function sendAsset(ctx: AdminContext, name: string): void {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name as keyof typeof ASSETS] : undefined;
  if (!asset) {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body = 'Not found';
    return;
  }
  ctx.type = asset.type;
  ctx.set(
    'Cache-Control',
    ctx.query.v === asset.version
      ? 'public, max-age=31536000, immutable'
      : 'public, max-age=0, must-revalidate',
  );
  ctx.body = asset.body;
}
