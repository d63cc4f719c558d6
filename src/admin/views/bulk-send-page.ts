import { RECIPIENT_FIELDS } from '../../features/bulk-sends/csv-rows.ts';
import type { TemplateWithVersion } from '../../features/templates/template-store.ts';
import type { ErrorDetails } from '../../errors.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { formatNumber } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { titleIn } from './home-page.ts';
import { csrfInput, layout, type PageContext } from './page.ts';

/** What checking a file found: how many rows, and every problem (rows keyed `rows.<n>.<field>`, the file's `file`). */
export interface CheckOutcome {
  rows: number;
  invalid: number;
  details: ErrorDetails;
}

const ROW_PROBLEMS_SHOWN = 200;

/** The check's findings: the section JavaScript swaps in place after a check, and the page shows after a post. */
export function checkResults(page: PageContext, outcome: CheckOutcome | undefined): SafeHtml {
  const { t } = page;
  if (!outcome) return html`<section id="check-results" aria-live="polite"></section>`;
  // Whatever is not a row's (the file, a part of the form) stops the whole upload.
  const fileProblems = Object.entries(outcome.details)
    .filter(([key]) => !/^rows\.\d/.test(key))
    .flatMap(([, messages]) => messages);
  const rowProblems = Object.entries(outcome.details)
    .map(([key, messages]) => ({ match: /^rows\.(\d+)(?:\.(.+))?$/.exec(key), messages }))
    .filter((p) => p.match)
    .flatMap((p) =>
      p.messages.map((m) => ({ row: Number(p.match![1]), field: p.match![2] ?? '', message: m })),
    )
    .sort((a, b) => a.row - b.row);
  const shown = rowProblems.slice(0, ROW_PROBLEMS_SHOWN);
  const n = (x: number) => formatNumber(page.locale, x);
  const summary =
    fileProblems.length > 0
      ? html`<p class="notice notice-error" role="alert">${t('checkFileErrors')}</p>
          <ul class="notice notice-error">
            ${fileProblems.map((m) => html`<li>${m}</li>`)}
          </ul>`
      : outcome.invalid > 0
        ? html`<p class="notice notice-error" role="alert">
            ${t('checkSomeInvalid', { invalid: n(outcome.invalid), count: n(outcome.rows) })}
          </p>`
        : html`<p class="notice notice-ok" role="status">
            ${t('checkAllValid', { count: n(outcome.rows) })}
          </p>`;
  return html`<section id="check-results" aria-live="polite">
    ${summary}
    ${
      shown.length > 0 &&
      html`<div class="table-wrap">
        <table id="row-errors">
          <thead>
            <tr>
              <th scope="col">${t('rowHeading')}</th>
              <th scope="col">${t('fieldHeading')}</th>
              <th scope="col">${t('problemHeading')}</th>
            </tr>
          </thead>
          <tbody>
            ${shown.map(
              (p) =>
                html`<tr data-row="${p.row}">
                  <th scope="row">${n(p.row)}</th>
                  <td><code dir="ltr">${p.field}</code></td>
                  <td>${p.message}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`
    }
    ${
      rowProblems.length > shown.length &&
      html`<p>${t('moreRowErrors', { count: n(rowProblems.length - shown.length) })}</p>`
    }
  </section>`;
}

/** /admin/templates/{id}/bulk-send: the CSV form, and what the last check found. */
export function bulkSendPage(
  page: PageContext,
  found: TemplateWithVersion,
  outcome: CheckOutcome | undefined,
): SafeHtml {
  const { t } = page;
  const { template, version } = found;
  const title = titleIn(page.locale, version);
  const columns = version.roles
    .flatMap((r) => [`${r.key}.name`, `${r.key}.phone`])
    .concat(['title'])
    .join(', ');
  return layout(page, {
    title: t('bulkSendTitle', { title }),
    current: 'templates',
    body: html`<h1>${t('bulkSendTitle', { title })}</h1>
      <p class="lead">${t('bulkSendIntro')}</p>
      <p class="hint">
        ${t('csvColumns', { columns: '' })}<code dir="ltr">${columns}</code> (<code dir="ltr"
          >${RECIPIENT_FIELDS.join(', ')}</code
        >)
      </p>
      <form
        class="card"
        id="bulk-send-form"
        method="post"
        action="${ADMIN_PATHS.bulkSendNew(template.id)}"
        enctype="multipart/form-data"
      >
        ${csrfInput(page.account!.csrfToken)}
        <div class="field">
          <label for="csv-file">${t('csvFile')}</label>
          <input type="file" id="csv-file" name="file" accept=".csv,text/csv" required />
        </div>
        <div class="checkbox">
          <input type="checkbox" id="skip-invalid" name="skip_invalid" value="true" />
          <label for="skip-invalid">${t('skipInvalid')}</label>
        </div>
        <p>
          <button type="submit" class="button button-secondary" name="intent" value="check" data-check>
            ${t('checkFile')}
          </button>
          <button type="submit" class="button button-primary" name="intent" value="send">
            ${t('startSending')}
          </button>
        </p>
      </form>
      ${checkResults(page, outcome)}`,
  });
}
