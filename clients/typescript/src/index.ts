/**
 * A typed client for the Wathiq API: openapi-fetch over the types openapi-typescript generates from openapi.json
 * (schema.d.ts), plus `createDocument`, the multipart create with typed approvers, cc and reminders (the
 * generated type of that form cannot express them: each is a JSON part).
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

export type { components, paths };
export type Schemas = components['schemas'];
export type Document = Schemas['Document'];

type ApproverFields = Schemas['Approver'];
/** An approver as the create form takes it: `name` (or `name_ar` and `name_en`) and `phone`, the rest optional. */
export type ApproverInput = { phone: string; name?: string; order?: number } & Partial<
  Pick<
    ApproverFields,
    | 'name_ar'
    | 'name_en'
    | 'role_ar'
    | 'role_en'
    | 'action_type'
    | 'order_index'
    | 'page'
    | 'x'
    | 'y'
    | 'width'
    | 'language'
    | 'verification'
    | 'notify'
  >
>;
export type CcInput = { phone: string } & Partial<Pick<Schemas['CcRecipient'], 'language' | 'name'>>;

export interface CreateDocumentInput {
  title?: string;
  title_ar?: string;
  title_en?: string;
  department?: string;
  workflow_type?: 'sequential' | 'parallel';
  expires_in_days?: number;
  allow_delegation?: boolean;
  approvers: ApproverInput[];
  cc?: CcInput[];
  reminders?: Schemas['Reminders'];
  /** The PDF. */
  file: Blob | Uint8Array;
  filename?: string;
  /** Makes the create safe to retry (the same key within 24 hours replays the first answer). */
  idempotencyKey?: string;
}

type ErrorBody = Schemas['Error'];

/** An answer in the error envelope: the HTTP status, and the envelope's code, message and per-field details. */
export class WathiqError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    const error = (body as Partial<ErrorBody> | undefined)?.error;
    super(`${status}: ${error?.message ?? 'request failed'}`);
    this.name = 'WathiqError';
    this.status = status;
    this.body = body;
  }
}

/** The `data` of a success envelope, or a WathiqError. */
export async function unwrap<T>(
  request: Promise<{ data?: { data: T }; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await request;
  if (data === undefined) throw new WathiqError(response.status, error);
  return data.data;
}

export interface WathiqClientOptions {
  /** Where Wathiq answers, e.g. http://127.0.0.1:3000 (the API is under /api/v1). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  fetch?: typeof globalThis.fetch;
}

export interface WathiqClient {
  /** Every operation, typed: `api.GET('/documents/{id}/status', { params: { path: { id } } })`. */
  api: Client<paths>;
  createDocument(input: CreateDocumentInput): Promise<Document>;
}

export function createWathiqClient(options: WathiqClientOptions): WathiqClient {
  const api = createClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/api/v1`,
    headers: { Authorization: `Bearer ${options.apiKey}:${options.apiSecret}` },
    ...(options.fetch && { fetch: options.fetch }),
  });
  return {
    api,
    createDocument: (input) =>
      unwrap(
        api.POST('/documents', {
          // The generated form type is a union with `unknown` approvers: the typed input stands for it, and the
          // serializer turns it into the FormData sent as it is (fetch sets the boundary).
          body: input as never,
          bodySerializer: () => documentForm(input),
          params: input.idempotencyKey ? { header: { 'Idempotency-Key': input.idempotencyKey } } : {},
        }),
      ),
  };
}

/** The multipart body: plain fields as strings, approvers, cc and reminders as JSON parts, then the PDF. */
export function documentForm(input: CreateDocumentInput): FormData {
  const form = new FormData();
  const fields = ['title', 'title_ar', 'title_en', 'department', 'workflow_type', 'expires_in_days'] as const;
  for (const name of fields) if (input[name] !== undefined) form.append(name, String(input[name]));
  if (input.allow_delegation !== undefined) form.append('allow_delegation', String(input.allow_delegation));
  const json = (value: unknown) => new Blob([JSON.stringify(value)], { type: 'application/json' });
  form.append('approvers', json(input.approvers));
  if (input.cc !== undefined) form.append('cc', json(input.cc));
  if (input.reminders !== undefined) form.append('reminders', json(input.reminders));
  const file = input.file instanceof Blob ? input.file : new Blob([input.file], { type: 'application/pdf' });
  form.append('file', file, input.filename ?? 'document.pdf');
  return form;
}
