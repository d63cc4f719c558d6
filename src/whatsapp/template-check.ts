import { AppError } from '../errors.ts';
import type { CatalogButton, ExpectedTemplate } from './template-catalog.ts';

/** A template as `GET /{waba-id}/message_templates` lists it (the fields asked for below). */
export interface GraphTemplate {
  name: string;
  language: string;
  status: string;
  category?: string;
  components?: {
    type: string;
    format?: string;
    text?: string;
    buttons?: { type: string; text?: string }[];
  }[];
}

export interface TemplateListSource {
  apiUrl: string;
  accessToken: string;
  businessAccountId: string;
  timeoutMs: number;
}

/** Pages are asked for this size; Meta's own default is 25. */
const PAGE_SIZE = 100;
/** A business account holds at most a few hundred templates; a list that never ends is the server's fault. */
const MAX_PAGES = 1000;

/**
 * Every template of the WhatsApp Business account, page after page (Meta's cursor paging: `paging.cursors.after`
 * while `paging.next` is present). The next page is asked of the configured API URL with the cursor, never of the
 * absolute `next` address the answer carries, so the token only ever goes to WHATSAPP_API_URL.
 */
export async function listGraphTemplates(
  source: TemplateListSource,
  onPage: (page: { number: number; templates: number }) => void = () => undefined,
): Promise<GraphTemplate[]> {
  const all: GraphTemplate[] = [];
  let after: string | undefined;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const url = new URL(`${source.apiUrl}/${source.businessAccountId}/message_templates`);
    url.searchParams.set('fields', 'name,language,status,category,components');
    url.searchParams.set('limit', String(PAGE_SIZE));
    if (after) url.searchParams.set('after', after);
    const body = await getJson(url, source);
    const data = body.data;
    if (!Array.isArray(data))
      throw new AppError('bad_gateway', 'The Graph API answered a template list without data');
    for (const t of data as unknown[]) all.push(parseTemplate(t));
    onPage({ number: page, templates: all.length });
    const paging = body.paging as { next?: unknown; cursors?: { after?: unknown } } | undefined;
    if (typeof paging?.next !== 'string') return all;
    if (typeof paging.cursors?.after !== 'string' || paging.cursors.after === after) {
      throw new AppError(
        'bad_gateway',
        'The Graph API announced a next page of templates without a new cursor',
      );
    }
    after = paging.cursors.after;
  }
  throw new AppError('bad_gateway', `The Graph API's template list went past ${MAX_PAGES} pages`);
}

async function getJson(url: URL, source: TemplateListSource): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${source.accessToken}` },
      redirect: 'error',
      signal: AbortSignal.timeout(source.timeoutMs),
    });
  } catch (err) {
    throw new AppError(
      'bad_gateway',
      `The Graph API did not answer: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('bad_gateway', `The Graph API answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok || typeof body !== 'object' || body === null) {
    const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
    throw new AppError(
      'bad_gateway',
      `The Graph API refused the template list (${res.status}${typeof message === 'string' ? `: ${message}` : ''})`,
    );
  }
  return body as Record<string, unknown>;
}

function parseTemplate(t: unknown): GraphTemplate {
  const o = t as Partial<GraphTemplate> | null;
  if (!o || typeof o.name !== 'string' || typeof o.language !== 'string') {
    throw new AppError('bad_gateway', 'The Graph API listed a template without a name or language');
  }
  return {
    name: o.name,
    language: o.language,
    status: typeof o.status === 'string' ? o.status : 'UNKNOWN',
    ...(typeof o.category === 'string' && { category: o.category }),
    components: Array.isArray(o.components) ? o.components : [],
  };
}

export interface TemplateFinding {
  name: string;
  language: string;
  /** ok; missing from the account; present but not APPROVED (Meta refuses to send it); registered differently. */
  verdict: 'ok' | 'missing' | 'not_approved' | 'differs';
  /** What differs, one sentence each. */
  problems: string[];
}

const sameButtons = (a: CatalogButton[], b: CatalogButton[]) =>
  a.length === b.length && a.every((x, i) => x.type === b[i]!.type && x.text === b[i]!.text);

/** Compares what Wathiq sends with what the account holds, template by template and language by language. */
export function checkTemplates(expected: ExpectedTemplate[], listed: GraphTemplate[]): TemplateFinding[] {
  const byKey = new Map(listed.map((t) => [`${t.name}\u0000${t.language}`, t]));
  return expected.map((want) => {
    const got = byKey.get(`${want.name}\u0000${want.language}`);
    const finding = (verdict: TemplateFinding['verdict'], problems: string[] = []): TemplateFinding => ({
      name: want.name,
      language: want.language,
      verdict,
      problems,
    });
    if (!got) return finding('missing', ['not in the WhatsApp Business account']);
    const problems: string[] = [];
    if (got.category && got.category !== want.category) {
      problems.push(`category ${got.category}, expected ${want.category}`);
    }
    if (want.category === 'UTILITY') {
      const components = got.components ?? [];
      const body = components.find((c) => c.type === 'BODY')?.text;
      if (body !== want.body)
        problems.push(`body ${JSON.stringify(body ?? null)}, expected ${JSON.stringify(want.body)}`);
      const header = components.find((c) => c.type === 'HEADER')?.format;
      if (header !== want.header)
        problems.push(`header ${header ?? 'none'}, expected ${want.header ?? 'none'}`);
      const buttons = (components.find((c) => c.type === 'BUTTONS')?.buttons ?? []).map((b) => ({
        type: b.type as CatalogButton['type'],
        text: b.text ?? '',
      }));
      if (!sameButtons(buttons, want.buttons)) {
        const show = (bs: CatalogButton[]) =>
          bs.length ? bs.map((b) => `${b.type} "${b.text}"`).join(', ') : 'none';
        problems.push(`buttons ${show(buttons)}, expected ${show(want.buttons)}`);
      }
    }
    if (problems.length > 0) return finding('differs', problems);
    if (got.status !== 'APPROVED') return finding('not_approved', [`status ${got.status}`]);
    return finding('ok');
  });
}
