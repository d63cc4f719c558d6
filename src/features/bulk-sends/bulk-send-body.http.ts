import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Middleware } from 'koa';
import { addDetail, AppError, newDetails, type ErrorDetails } from '../../errors.ts';
import type { AppContext, AppState } from '../../http/context.ts';
import { readRawBody } from '../../http/raw-body.ts';
import { withoutPrototypes } from '../../http/untrusted.ts';
import { lingerAndClose } from '../documents/upload.http.ts';
import { idempotencyOf, requestFingerprint } from '../../api/middleware/idempotency.ts';
import type { BulkSendSource } from './create-bulk-send.ts';

/** Room for the form fields beside the CSV file. */
const FIELDS_ALLOWANCE_BYTES = 64 * 1024;

export interface BulkSendBody {
  source: BulkSendSource;
  skipInvalid: unknown;
  details: ErrorDetails;
}

const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
const tooLarge = (max: number, what: string) =>
  new AppError(
    'payload_too_large',
    `${what} is larger than the ${megabytes(max)} a bulk send may have (BULK_SEND_MAX_MB)`,
  );

/**
 * The JSON body of POST /templates/{id}/bulk-sends, parsed in the app's place (its JSON_BODY_LIMIT is for ordinary
 * requests): up to `maxBytes` (BULK_SEND_MAX_MB; past it 413, up front when Content-Length says so), UTF-8 only,
 * objects without prototypes. Mounted where the app parses JSON, so the Idempotency-Key step sees the body.
 */
export function bulkSendJsonBody(maxBytes: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.is('json')) {
      const raw = await readRawBody(ctx.req, maxBytes).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'payload_too_large') {
          lingerAndClose(ctx);
          throw tooLarge(maxBytes, 'The body');
        }
        throw err;
      });
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
      } catch {
        throw AppError.validation({ body: ['The body is not UTF-8 text'] });
      }
      try {
        ctx.request.body = withoutPrototypes(JSON.parse(text)) as typeof ctx.request.body;
      } catch {
        throw new AppError('bad_request', 'Malformed JSON in request body');
      }
    }
    await next();
  };
}

/**
 * What POST /templates/{id}/bulk-sends carried: JSON `{rows, skip_invalid}` (parsed by `bulkSendJsonBody`), or
 * multipart with the CSV in the part `file` (at most `maxBytes`) and `skip_invalid` as a field. A multipart body
 * claims the Idempotency-Key once read (its fields and the file's SHA-256).
 */
export async function readBulkSendBody(ctx: AppContext, maxBytes: number): Promise<BulkSendBody> {
  if (ctx.is('multipart')) {
    const body = await readCsvForm(ctx, maxBytes);
    const csv = 'csv' in body.source ? body.source.csv : new Uint8Array();
    await idempotencyOf(ctx)?.begin(
      requestFingerprint(ctx.method, ctx.path, {
        skip_invalid: body.skipInvalid ?? null,
        csv: createHash('sha256').update(csv).digest('hex'),
      }),
    );
    return body;
  }
  if (!ctx.is('json'))
    throw new AppError(
      'unsupported_media_type',
      'Send the rows as application/json {"rows": […]}, or a CSV file as multipart/form-data in the part "file"',
    );
  const parsed: unknown = ctx.request.body;
  const body = (
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {}
  ) as Record<string, unknown>;
  const details = newDetails();
  if (parsed !== body)
    addDetail(details, 'body', 'The body must be an object {"rows": […], "skip_invalid": false}');
  for (const key of Object.keys(body))
    if (key !== 'rows' && key !== 'skip_invalid')
      addDetail(details, key, `${key} is not a field of a bulk send`);
  return { source: { rows: body.rows }, skipInvalid: body.skip_invalid, details };
}

/**
 * A multipart form with a CSV file in the part `file` (at most `maxBytes`: 413 past it) and the fields named in
 * `allowed` (any other is a problem in `details`). Shared by the API and the dashboard's upload.
 */
export function readCsvForm(
  ctx: AppContext,
  maxBytes: number,
  allowed: readonly string[] = ['skip_invalid'],
): Promise<BulkSendBody & { fields: ReadonlyMap<string, string> }> {
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + FIELDS_ALLOWANCE_BYTES) {
    lingerAndClose(ctx);
    throw tooLarge(maxBytes, 'The CSV file');
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: ctx.req.headers,
      // Field names and file names in UTF-8, as browsers and the document upload read them.
      defParamCharset: 'utf8',
      limits: {
        fileSize: maxBytes + 1,
        files: 1,
        fields: 10,
        parts: 11,
        fieldSize: 1024,
        fieldNameSize: 100,
      },
    });
  } catch (err) {
    throw new AppError('bad_request', `Malformed multipart/form-data request: ${(err as Error).message}`);
  }
  return new Promise((resolve, reject) => {
    const details = newDetails();
    const fields = new Map<string, string>();
    const chunks: Buffer[] = [];
    let file = false;
    let failed = false;
    const fail = (err: AppError) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(parser);
      lingerAndClose(ctx);
      reject(err);
    };
    parser.on('field', (name: string, value: string) => {
      if (fields.has(name)) addDetail(details, name, `${name} is given twice`);
      fields.set(name, value);
    });
    parser.on('file', (name: string, stream: Readable) => {
      stream.on('error', () => undefined);
      if (name !== 'file') {
        addDetail(details, name, 'The CSV goes in the part named "file"');
        stream.resume();
        return;
      }
      file = true;
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(tooLarge(maxBytes, 'The CSV file')));
    });
    parser.on('filesLimit', () => addDetail(details, 'file', 'One CSV file, in the part named "file"'));
    parser.on('error', (err: Error) =>
      fail(new AppError('bad_request', `Malformed multipart/form-data request: ${err.message}`)),
    );
    parser.on('close', () => {
      if (failed) return;
      if (!file) addDetail(details, 'file', 'A CSV file is required in the part named "file"');
      for (const name of fields.keys())
        if (!allowed.includes(name)) addDetail(details, name, `${name} is not a field of a bulk send`);
      resolve({
        source: { csv: Buffer.concat(chunks) },
        skipInvalid: fields.get('skip_invalid'),
        details,
        fields,
      });
    });
    ctx.req.on('error', () => fail(new AppError('bad_request', 'The request was aborted by the client')));
    ctx.req.pipe(parser);
  });
}
