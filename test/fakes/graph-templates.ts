import type http from 'node:http';

/** A message template as Meta's `GET /{waba-id}/message_templates` lists it. */
export interface ListedTemplate {
  name: string;
  language: string;
  status: 'APPROVED' | 'PENDING' | 'REJECTED' | 'PAUSED' | 'DISABLED';
  category: 'UTILITY' | 'MARKETING' | 'AUTHENTICATION';
  components: {
    type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
    format?: string;
    text?: string;
    buttons?: { type: string; text: string; url?: string }[];
  }[];
}

const DEFAULT_LIMIT = 25;
const cursorOf = (index: number) => Buffer.from(`cursor:${index}`).toString('base64url');
const indexOf = (cursor: string) =>
  Number(
    Buffer.from(cursor, 'base64url')
      .toString()
      .replace(/^cursor:/, ''),
  );

/**
 * Answers a template list request as Meta does: `limit` templates from the `after` cursor, each with an id, and
 * `paging.cursors` with `paging.next` (an absolute URL) while more remain. Returns an error message for a request
 * Meta would refuse, or undefined once answered.
 */
export function answerTemplateList(
  url: URL,
  templates: readonly ListedTemplate[],
  res: http.ServerResponse,
): string | undefined {
  const limit = url.searchParams.has('limit') ? Number(url.searchParams.get('limit')) : DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    return '(#100) Param limit must be a positive integer';
  const after = url.searchParams.get('after');
  const start = after === null ? 0 : indexOf(after) + 1;
  if (!Number.isInteger(start) || start < 0) return '(#100) Invalid cursor';
  const page = templates.slice(start, start + limit);
  const body: Record<string, unknown> = {
    data: page.map((t, i) => ({ ...t, id: String(900000000000000 + start + i) })),
  };
  if (page.length > 0) {
    const paging: Record<string, unknown> = {
      cursors: { before: cursorOf(start), after: cursorOf(start + page.length - 1) },
    };
    if (start + page.length < templates.length) {
      const next = new URL(url);
      next.searchParams.set('after', cursorOf(start + page.length - 1));
      paging.next = `https://graph.facebook.com${next.pathname}${next.search}`;
    }
    body.paging = paging;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  return undefined;
}
