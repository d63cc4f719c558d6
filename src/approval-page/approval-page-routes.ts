import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import { z } from 'zod';
import { ApprovalRefused, type ApprovalClient } from '../approval/client.ts';
import type { AppContext, AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import { parseJson, readRawBody } from '../http/raw-body.ts';
import { parseBody } from '../http/validation.ts';
import { accountsStore } from '../db/stores/accounts-store.ts';
import { approversStore, type Approver } from '../db/stores/approvers-store.ts';
import { documentsStore, type Document } from '../db/stores/documents-store.ts';
import { AppError } from '../errors.ts';
import { languageFor } from '../whatsapp/index.ts';
import type { ActionEvidence } from '../approval/definitions.ts';
import { decodePngDataUrl } from './images.ts';
import { renderApprovalPage, renderClosedPage } from './render-page.ts';
import type { Language } from '../domain/model.ts';
import { STRINGS } from './strings.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const MAX_BODY = 4 * 1024 * 1024;
const require = createRequire(import.meta.url);

const ASSET_FILES: Record<string, { path: () => string; type: string }> = {
  'approval.js': {
    path: () => fileURLToPath(new URL('./public/approval.js', import.meta.url)),
    type: 'text/javascript',
  },
  'approval.css': {
    path: () => fileURLToPath(new URL('./public/approval.css', import.meta.url)),
    type: 'text/css',
  },
  'pdf.min.mjs': {
    path: () => require.resolve('pdfjs-dist/legacy/build/pdf.min.mjs'),
    type: 'text/javascript',
  },
  'pdf.worker.min.mjs': {
    path: () => require.resolve('pdfjs-dist/legacy/build/pdf.worker.min.mjs'),
    type: 'text/javascript',
  },
};

const CompleteBody = z.object({
  signature_png: z.string().optional(),
  typed_name: z.string().trim().min(1).max(255).optional(),
  stamp_png: z.string().optional(),
  generated_seal: z.boolean().optional(),
});
const RejectBody = z.object({ reason: z.string().trim().max(1000).optional() });

interface Resolved {
  approver: Approver;
  document: Document;
}

type Unusable = { status: 404 | 409 | 410; code: 'not_found' | 'conflict' | 'gone'; message: string };

function unusable(r: Resolved | undefined): Unusable | undefined {
  if (!r) return { status: 404, code: 'not_found', message: 'This approval link does not exist' };
  const { approver, document } = r;
  if (approver.status === 'completed' || approver.status === 'rejected') {
    return { status: 410, code: 'gone', message: `This approver has already acted (${approver.status})` };
  }
  if (document.status !== 'pending' && document.status !== 'in_progress') {
    return {
      status: 410,
      code: 'gone',
      message: `Document is ${document.status}; it no longer accepts actions`,
    };
  }
  // Whose turn it is, the workflow decides (an action out of turn is refused with 409).
  return undefined;
}

/**
 * The approver's public page (decisions §5): `GET /a/{token}` in Arabic (right-to-left) or English, the PDF
 * rendered in the page, and its JSON endpoints. A token is one approver's, at least 256 random bits, and
 * unusable (410) once they acted or the document left pending/in_progress.
 */
export function createApprovalPageRouter(
  deps: Pick<ApiDeps, 'db' | 'config' | 'logger' | 'storage'> & { approvals: ApprovalClient },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/a' });
  const { approvals } = deps;

  async function resolve(token: string | undefined): Promise<Resolved | undefined> {
    if (!token || !TOKEN.test(token)) return undefined;
    const approver = await approversStore(deps.db).findByLinkToken(token);
    const document = approver && (await documentsStore(deps.db).findByIdUnscoped(approver.documentId));
    return approver && document ? { approver, document } : undefined;
  }

  async function resolveForAction(token: string | undefined): Promise<Resolved> {
    const r = await resolve(token);
    const problem = unusable(r);
    if (problem) throw new AppError(problem.code, problem.message);
    return r!;
  }

  const language = (ctx: AppContext, approver?: Approver): Language => {
    const asked = ctx.query.lang;
    if (asked === 'ar' || asked === 'en') return asked;
    return approver ? languageFor(approver.phone, approver.language) : 'ar';
  };

  const pageHeaders = (ctx: AppContext) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; img-src 'self' data: blob:; script-src 'self'; style-src 'self'; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
  };

  // pdf.js draws the PDF standard fonts (Helvetica, Times, …) from these files.
  router.get('/assets/standard_fonts/:file', async (ctx) => {
    const file = ctx.params.file ?? '';
    if (!/^[A-Za-z0-9_-]+\.(pfb|ttf)$/.test(file)) throw AppError.notFound('Asset');
    const dir = path.dirname(require.resolve('pdfjs-dist/standard_fonts/LICENSE_FOXIT'));
    ctx.type = 'application/octet-stream';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await readFile(path.join(dir, file)).catch(() => {
      throw AppError.notFound('Asset');
    });
  });

  router.get('/assets/:file', async (ctx) => {
    const asset = ASSET_FILES[ctx.params.file ?? ''];
    if (!asset) throw AppError.notFound('Asset');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = await readFile(asset.path());
  });

  router.get('/:token', async (ctx) => {
    pageHeaders(ctx);
    const r = await resolve(ctx.params.token);
    const lang = language(ctx, r?.approver);
    const problem = unusable(r);
    ctx.type = 'text/html';
    if (problem) {
      const t = STRINGS[lang];
      const message =
        problem.status === 404
          ? t.errors.gone
          : problem.status === 409
            ? t.closed.not_your_turn
            : r!.approver.status === 'completed' || r!.approver.status === 'rejected'
              ? t.closed.already_acted
              : `${t.closed.document_closed} (${r!.document.status}).`;
      ctx.status = problem.status;
      ctx.body = renderClosedPage(lang, message);
      return;
    }
    const account = await accountsStore(deps.db).findById(r!.document.accountId);
    ctx.body = renderApprovalPage({
      token: ctx.params.token!,
      lang,
      document: r!.document,
      approver: r!.approver,
      accountName: account?.name ?? '',
    });
  });

  router.get('/:token/document.pdf', async (ctx) => {
    const { document } = await resolveForAction(ctx.params.token);
    const stream = await deps.storage.get(document.fileKey);
    if (!stream) throw AppError.notFound('Document file');
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Disposition', `inline; filename="${document.reference}.pdf"`);
    ctx.type = 'application/pdf';
    ctx.body = stream;
  });

  const evidenceOf = (ctx: AppContext): ActionEvidence => ({
    at: new Date().toISOString(),
    channel: 'page',
    ip: ctx.ip,
    userAgent: ctx.get('user-agent').slice(0, 512),
  });

  async function act(ctx: AppContext, r: Resolved, kind: 'complete' | 'reject', evidence: ActionEvidence) {
    try {
      const view = await approvals.act(r.document.id, { approverId: r.approver.id, kind, evidence });
      ctx.status = 200;
      ctx.body = {
        success: true,
        data: { status: view.status, completed: view.completed, total: view.total },
      };
    } catch (err) {
      if (evidence.imageKey) await deps.storage.delete(evidence.imageKey).catch(() => undefined);
      if (!(err instanceof ApprovalRefused)) throw err;
      if (err.refusal === 'not_your_turn' || err.refusal === 'not_notified')
        throw new AppError('conflict', err.message);
      if (err.refusal === 'unknown_approver') throw AppError.notFound('Approver');
      throw new AppError('gone', err.message);
    }
  }

  router.post('/:token/complete', async (ctx) => {
    const r = await resolveForAction(ctx.params.token);
    const body = parseBody(CompleteBody, parseJson(await readRawBody(ctx.req, MAX_BODY)));
    const evidence = evidenceOf(ctx);
    let image: Buffer | undefined;
    if (r.approver.actionType === 'sign') {
      if (body.signature_png !== undefined) image = decodePngDataUrl('signature_png', body.signature_png);
      else if (body.typed_name) evidence.typedName = body.typed_name;
      else
        throw AppError.validation({
          signature_png: ['Draw a signature (signature_png) or type your name (typed_name)'],
        });
    } else if (r.approver.actionType === 'stamp') {
      if (body.stamp_png !== undefined) image = decodePngDataUrl('stamp_png', body.stamp_png);
      else if (body.generated_seal === true) evidence.generatedSeal = true;
      else
        throw AppError.validation({
          stamp_png: ['Upload a stamp image (stamp_png) or choose the generated seal (generated_seal: true)'],
        });
    }
    if (image) {
      evidence.imageKey = `approvals/${r.document.id}/${r.approver.id}/${randomUUID()}.png`;
      await deps.storage.put(evidence.imageKey, Readable.from([image]), { contentType: 'image/png' });
    }
    await act(ctx, r, 'complete', evidence);
  });

  router.post('/:token/reject', async (ctx) => {
    const r = await resolveForAction(ctx.params.token);
    const { reason } = parseBody(RejectBody, parseJson(await readRawBody(ctx.req, MAX_BODY)));
    await act(ctx, r, 'reject', { ...evidenceOf(ctx), ...(reason ? { reason } : {}) });
  });

  return router;
}
