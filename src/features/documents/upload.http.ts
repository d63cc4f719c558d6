import { Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import type { Plan } from '../../domain/plans.ts';
import { addDetail, AppError, newDetails, type ErrorDetails } from '../../errors.ts';
import type { Storage } from '../../storage/storage.ts';
import type { AppContext } from '../../http/context.ts';

/** Room for the form fields next to the file: 50 approvers × a dozen fields fit well within it. */
export const FIELDS_ALLOWANCE_BYTES = 1024 * 1024;
const FIELD_MAX_BYTES = 16 * 1024;
/**
 * The parts that hold JSON (approvers, cc, reminders). Clients send them as files as often as not: Node's and
 * browsers' FormData give every Blob part `filename="blob"`, curl's `-F name=@file.json` the file's name. They are
 * read as the fields they are; every other part with a filename but "file" is refused.
 */
const JSON_PARTS: ReadonlySet<string> = new Set(['approvers', 'cc', 'reminders']);
/** After refusing a body early, read and discard at most this much before closing the connection. */
const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 5_000;

export interface ReceivedFile {
  key: string;
  filename: string | null;
  size: number;
  sha256: string;
  /** The file once more, in memory, for the PDF checks (at most the plan's limit). */
  bytes: Buffer;
}

export interface ReceivedUpload {
  /** Form fields in arrival order. */
  fields: [string, string][];
  file?: ReceivedFile;
  /** Problems with parts that do not stop the upload (extra files, over-long fields). */
  errors: ErrorDetails;
}

function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? String(mb) : mb.toFixed(1);
}

export function tooLargeError(maxFileBytes: number, plan: Plan): AppError {
  return AppError.validation({
    file: [
      `The file is larger than the ${megabytes(maxFileBytes)} MB limit of the ${plan} plan; upload a smaller PDF.`,
    ],
  });
}

function cleanFilename(name: string | undefined): string | null {
  if (!name) return null;
  // eslint-disable-next-line no-control-regex
  const base = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255);
  return base || null;
}

/**
 * After answering a request whose body we stopped reading: drain a little of the rest (so the client, still
 * sending, reads our answer instead of a connection reset), then close the connection.
 */
export function lingerAndClose(ctx: AppContext): void {
  const { req, res } = ctx;
  res.once('finish', () => {
    let drained = 0;
    const close = () => req.socket.destroy();
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > LINGER_BYTES) {
        clearTimeout(timer);
        close();
      }
    });
    req.once('end', () => clearTimeout(timer));
    req.resume();
  });
}

/**
 * A JSON part that came as a file: read as the field it is, in its place among the fields, under the same size
 * limit as a field. Its place is taken on arrival, so the order of the fields is the order of the parts. Never rejects: a
 * part cut off by the end of the body is reported by the parser itself.
 */
function readTextPart(
  name: string,
  stream: Readable,
  fields: [string, string][],
  errors: ErrorDetails,
): Promise<void> {
  const slot = fields.push([name, '']) - 1;
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= FIELD_MAX_BYTES) chunks.push(chunk);
    });
    stream.on('error', () => resolve());
    stream.on('end', () => {
      // An empty value counts as not given, as for an over-long field, which is reported instead.
      if (size > FIELD_MAX_BYTES) addDetail(errors, name, `${name} is too long`);
      else fields[slot] = [name, new TextDecoder().decode(Buffer.concat(chunks))];
      resolve();
    });
  });
}

class ByteCap extends Transform {
  private seen = 0;
  constructor(
    private readonly cap: number,
    private readonly onExceeded: () => void,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _e: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.cap) {
      this.onExceeded();
      callback();
      return;
    }
    callback(null, chunk);
  }
}

/** One upload on its way in: what the listeners of the parser and of the streams collect, and how they stop it. */
interface Reception {
  readonly fields: [string, string][];
  /** Keyed by part names the client chose (`constructor`, `__proto__`, …): a map without a prototype. */
  readonly errors: ErrorDetails;
  /** The file's bytes as they go to storage, for the PDF checks. */
  readonly chunks: Buffer[];
  /** Parts other than "file" sent with a filename, read as text: settled before the fields are handed on. */
  readonly textParts: Promise<void>[];
  filename: string | null;
  fileSink?: Transform;
  stored?: Promise<{ size: number; sha256: string }>;
  failure?: Error;
  /** Caps the whole body: the plan's file limit and room for the fields. */
  readonly cap: ByteCap;
  /** Resolves when the parser is done, rejects with the first failure. */
  readonly parsed: Promise<void>;
  readonly settle: (err?: Error) => void;
  /** Stops reading. Never throws: it is what handlers fall back on. */
  readonly fail: (err: Error) => void;
  /** The handler, with a throw turned into this upload's failure. */
  readonly guard: <A extends unknown[]>(handler: (...args: A) => void) => (...args: A) => void;
}

function createParser(ctx: AppContext, maxFileBytes: number): busboy.Busboy {
  try {
    return busboy({
      headers: ctx.req.headers,
      defParamCharset: 'utf8',
      limits: {
        // busboy reports the limit on reaching it; one byte more lets a file of exactly the limit through.
        fileSize: maxFileBytes + 1,
        // The file, the JSON parts a client may send as Blobs (read as text), and one more, so a stray second file
        // is reported under its own part name (and discarded).
        files: 2 + JSON_PARTS.size,
        fields: 1000,
        parts: 1002,
        fieldSize: FIELD_MAX_BYTES,
        fieldNameSize: 200,
      },
    });
  } catch (err) {
    throw new AppError(
      'bad_request',
      `Malformed multipart/form-data request: ${err instanceof Error ? err.message : 'unreadable'}`,
    );
  }
}

function startReception(
  ctx: AppContext,
  parser: busboy.Busboy,
  bodyCap: number,
  tooLarge: () => Error,
): Reception {
  let settle!: (err?: Error) => void;
  const parsed = new Promise<void>((resolve, reject) => {
    settle = (err) => (err ? reject(err) : resolve());
  });
  // Stops reading: nothing more reaches the parser (which is left to the garbage collector rather than destroyed,
  // as busboy may still be inside the call that reported the problem).
  const fail = (err: Error) => {
    if (reception.failure) return;
    reception.failure = err;
    settle(err);
    try {
      ctx.req.unpipe(cap);
      cap.unpipe(parser);
      ctx.req.pause();
      reception.fileSink?.destroy(err);
    } catch {
      // The request has already failed with `err`; what could not be stopped is dropped with the connection.
    }
  };
  // Every callback of the parser and the streams runs inside busboy's or a stream's event dispatch, outside the
  // request's promise: a throw there would escape to the process and end it. Each one that does more than hand
  // over to `fail` or `settle` (which never throw) is guarded, so a throw becomes this request's failure and its
  // envelope. Every stream involved has an 'error' listener from the moment it exists.
  const guard =
    <A extends unknown[]>(handler: (...args: A) => void) =>
    (...args: A): void => {
      try {
        handler(...args);
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      }
    };
  const cap = new ByteCap(
    bodyCap,
    guard(() => fail(tooLarge())),
  );
  const reception: Reception = {
    fields: [],
    errors: newDetails(),
    chunks: [],
    textParts: [],
    filename: null,
    cap,
    parsed,
    settle: (err) => settle(err),
    fail,
    guard,
  };
  return reception;
}

const malformed = (err: Error) =>
  new AppError('malformed_multipart', `Malformed multipart/form-data request: ${err.message}`);

/** The part named "file": streamed to storage under `fileKey`, its bytes kept for the PDF checks. */
function receiveFilePart(
  r: Reception,
  stream: Readable,
  info: busboy.FileInfo,
  options: { storage: Storage; fileKey: string; tooLarge: () => Error },
): void {
  r.filename = cleanFilename(info.filename);
  const sink = new Transform({
    transform(chunk: Buffer, _e, callback) {
      r.chunks.push(chunk);
      callback(null, chunk);
    },
  });
  r.fileSink = sink;
  // Listened to from the start: `fail` may destroy the sink before storage has attached its own listeners.
  sink.on('error', r.fail);
  stream.on(
    'limit',
    r.guard(() => r.fail(options.tooLarge())),
  );
  // busboy ends a file part with an error only when the body breaks off inside it.
  stream.on(
    'error',
    r.guard((err: Error) => r.fail(malformed(err))),
  );
  stream.pipe(sink);
  const stored = options.storage.put(options.fileKey, sink, { contentType: 'application/pdf' });
  r.stored = stored;
  stored.catch(() => undefined); // awaited at the end; failures surface there or through `fail`
}

function listenToParser(
  parser: busboy.Busboy,
  r: Reception,
  options: { storage: Storage; fileKey: string; tooLarge: () => Error },
): void {
  parser.on(
    'field',
    r.guard((name: string, value: string, info: busboy.FieldInfo) => {
      if (info.valueTruncated) addDetail(r.errors, name, `${name} is too long`);
      else r.fields.push([name, value]);
    }),
  );
  parser.on(
    'file',
    r.guard((name: string, stream: Readable, info: busboy.FileInfo) => {
      if (JSON_PARTS.has(name)) {
        r.textParts.push(readTextPart(name, stream, r.fields, r.errors));
        return;
      }
      if (name !== 'file' || r.fileSink) {
        // A discarded part's own error (cut off by the end of the body) is reported by the parser as well.
        stream.on('error', () => undefined);
        stream.resume();
        addDetail(r.errors, name, 'Only one file may be uploaded, in the field named "file"');
        return;
      }
      receiveFilePart(r, stream, info, options);
    }),
  );
  parser.on(
    'filesLimit',
    r.guard(() => addDetail(r.errors, 'file', 'Only one file may be uploaded, in the field named "file"')),
  );
  const tooManyParts = r.guard(() =>
    r.fail(AppError.validation({ _: ['Too many form fields: a document has at most 50 approvers'] })),
  );
  parser.on('fieldsLimit', tooManyParts);
  parser.on('partsLimit', tooManyParts);
  parser.on(
    'error',
    r.guard((err: Error) => r.fail(malformed(err))),
  );
  parser.on('close', () => r.settle());
}

function listenToRequest(ctx: AppContext, r: Reception): void {
  r.cap.on('error', r.fail);
  const aborted = () => new AppError('bad_request', 'The request was aborted by the client');
  ctx.req.on(
    'error',
    r.guard(() => r.fail(aborted())),
  );
  ctx.req.on(
    'close',
    r.guard(() => {
      if (!ctx.req.complete) r.fail(aborted());
    }),
  );
}

/** Waits for the body to be read and the file stored; on any failure, removes what was stored under `fileKey`. */
async function finishReception(
  ctx: AppContext,
  r: Reception,
  options: { storage: Storage; fileKey: string },
): Promise<ReceivedUpload> {
  try {
    await r.parsed;
    await Promise.all(r.textParts);
    const result = r.stored ? await r.stored : undefined;
    if (r.failure) throw r.failure;
    return {
      fields: r.fields,
      errors: r.errors,
      ...(result
        ? {
            file: {
              key: options.fileKey,
              filename: r.filename,
              size: result.size,
              sha256: result.sha256,
              bytes: Buffer.concat(r.chunks),
            },
          }
        : {}),
    };
  } catch (err) {
    await r.stored?.catch(() => undefined);
    await options.storage.delete(options.fileKey).catch(() => undefined);
    if (r.failure) {
      lingerAndClose(ctx);
      throw r.failure;
    }
    throw err;
  }
}

/**
 * Streams a multipart/form-data body: form fields are collected, the part named `file` goes straight to storage
 * under `fileKey` while its size and SHA-256 are computed. The plan's byte limit is enforced as the bytes arrive
 * (and up front from Content-Length): past it, reading stops, the partial file is removed and the answer is a 422
 * on `file`. On any failure nothing is left under `fileKey`.
 */
export async function receiveUpload(
  ctx: AppContext,
  options: { storage: Storage; fileKey: string; maxFileBytes: number; plan: Plan },
): Promise<ReceivedUpload> {
  const { maxFileBytes } = options;
  const bodyCap = maxFileBytes + FIELDS_ALLOWANCE_BYTES;
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > bodyCap) {
    lingerAndClose(ctx);
    throw tooLargeError(maxFileBytes, options.plan);
  }
  const parser = createParser(ctx, maxFileBytes);
  const tooLarge = () => tooLargeError(maxFileBytes, options.plan);
  const reception = startReception(ctx, parser, bodyCap, tooLarge);
  listenToParser(parser, reception, { ...options, tooLarge });
  listenToRequest(ctx, reception);
  ctx.req.pipe(reception.cap).pipe(parser);
  return finishReception(ctx, reception, options);
}
