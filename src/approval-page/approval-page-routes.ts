import Router from '@koa/router';
import { z } from 'zod';
import {
  actFromPage,
  findPageLink,
  linkProblem,
  OTP_COOKIE,
  pageVerification,
  usablePageLink,
  type LinkProblem,
  type PageLink,
} from '../features/approval/act-from-page.ts';
import {
  hasVerifiedSession,
  sendApproverCode,
  verifyApproverCode,
} from '../features/approval/approver-otp.ts';
import { createOtpSender, type OtpSender } from '../whatsapp/otp-message.ts';
import type { ApprovalClient } from '../features/approval/client.ts';
import type { ActionEvidence, ActionKind, Refusal } from '../features/approval/definitions.ts';
import { delegateFromPage } from '../features/approval/delegate-from-page.ts';
import { currentApprovers, hasActed } from '../features/approval/rules.ts';
import { normalizePhone } from '../features/documents/phone.ts';
import { addDetail, newDetails } from '../errors.ts';
import { LIMITS } from '../domain/model.ts';
import { buildAssetCatalog } from '../http/asset-catalog.ts';
import { serveCatalog } from '../http/page-assets.ts';
import { pageAssetsFor } from '../http/precompressed.ts';
import type { AppContext, AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import { parseJson, readRawBody } from '../http/raw-body.ts';
import { postsOnlyAs } from '../http/cross-site-posts.ts';
import { hasBidiControl } from '../domain/bidi.ts';
import { ok } from '../http/respond.ts';
import { parseBody } from '../http/validation.ts';
import { accountsStore } from '../features/accounts/accounts-store.ts';
import { approversStore } from '../features/documents/approvers-store.ts';
import { documentEventsStore } from '../features/events/document-events-store.ts';
import { frameAncestors } from '../features/accounts/embed-origins.ts';
import { serializeApprover, serializeDocument } from '../features/documents/serialize.ts';
import type { WebhookDispatcher } from '../features/webhooks/dispatch.ts';
import type { Approver } from '../features/documents/approvers-store.ts';
import { AppError } from '../errors.ts';
import { addToLogContext } from '../logger.ts';
import { languageFor } from '../whatsapp/index.ts';
import { APPROVAL_ASSET_SOURCES, APPROVAL_ASSETS_BASE } from './assets.ts';
import { readImageField } from './images.ts';
import { isLinkPreview } from './link-preview.ts';
import { renderApprovalPage, renderClosedPage } from './render-page.ts';
import type { Language } from '../domain/model.ts';
import { STRINGS, type PageStrings } from './strings.ts';

const MAX_BODY = 4 * 1024 * 1024;

const CompleteBody = z.object({
  signature_png: z.string().optional(),
  typed_name: z.string().trim().min(1).max(255).optional(),
  stamp_png: z.string().optional(),
  generated_seal: z.boolean().optional(),
});
const RejectBody = z.object({ reason: z.string().trim().max(1000).optional() });
const CodeBody = z.object({ code: z.string().trim().max(16) });
const DelegateBody = z.object({ name: z.unknown(), phone: z.unknown(), reason: z.unknown() });
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * The approver's public page (docs/product-rules.md §5): `GET /a/{token}` in Arabic (right-to-left) or English, the
 * PDF rendered in the page, and its JSON endpoints. A token is one approver's, at least 256 random bits, and
 * unusable (410) once they acted or the document left pending/in_progress.
 */
export function createApprovalPageRouter(
  deps: Pick<ApiDeps, 'db' | 'config' | 'logger' | 'storage' | 'rateLimiter' | 'pageAssets' | 'secrets'> & {
    approvals: ApprovalClient;
    otpSender?: OtpSender;
    webhooks?: Pick<WebhookDispatcher, 'dispatchDocument'>;
  },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/a' });
  // The page's script sends JSON; a form another site posts here (text/plain) is refused before anything happens.
  router.use(postsOnlyAs(['application/json'], 'Send the body as application/json'));
  const otpSender = deps.otpSender ?? createOtpSender(deps.config, { logger: deps.logger });
  const otp = deps.config.otp;

  const language = (ctx: AppContext, approver?: Approver): Language => {
    const asked = ctx.query.lang;
    if (asked === 'ar' || asked === 'en') return asked;
    return approver ? languageFor(approver.phone, approver.language) : 'ar';
  };

  /**
   * What the page and its PDF share: never cached, the token in their address never sent on as a Referer, never
   * sniffed as another type, and framed only by the account's `embed_origins` (CSP frame-ancestors). Without any,
   * no one may frame them (and X-Frame-Options says DENY too); with some, X-Frame-Options is left out, as it
   * cannot name them and browsers that know CSP ignore it anyway. Answers the frame-ancestors source list.
   */
  const sharedHeaders = (ctx: AppContext, embedOrigins: readonly string[]): string => {
    const ancestors = frameAncestors(embedOrigins);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (ancestors === "'none'") ctx.set('X-Frame-Options', 'DENY');
    else ctx.remove('X-Frame-Options');
    ctx.set('X-Content-Type-Options', 'nosniff');
    return ancestors;
  };

  const pageHeaders = (ctx: AppContext, embedOrigins: readonly string[] = []) => {
    const ancestors = sharedHeaders(ctx, embedOrigins);
    ctx.set(
      'Content-Security-Policy',
      `default-src 'self'; img-src 'self' data: blob:; script-src 'self'; style-src 'self'; worker-src 'self' blob:; connect-src 'self'; frame-ancestors ${ancestors}; base-uri 'none'; form-action 'self'`,
    );
  };

  /**
   * The PDF's policy is frame-ancestors alone: a browser shows a PDF in a page of its own making, which a
   * default-src would break (Chromium applies it to the viewer's own styles).
   */
  const pdfHeaders = (ctx: AppContext, embedOrigins: readonly string[] = []) => {
    ctx.set('Content-Security-Policy', `frame-ancestors ${sharedHeaders(ctx, embedOrigins)}`);
  };

  /** `approver.viewed`, once per approver (its dedupe key), handed to delivery after the commit. */
  const recordView = async (r: PageLink) => {
    const approvers = await approversStore(deps.db).listByDocument(r.document.id);
    const approver = approvers.find((a) => a.id === r.approver.id) ?? r.approver;
    await documentEventsStore(deps.db).record({
      accountId: r.document.accountId,
      documentId: r.document.id,
      approverId: approver.id,
      event: 'approver.viewed',
      data: { document: serializeDocument(r.document, approvers), approver: serializeApprover(approver) },
      dedupeKey: `approver.viewed:${approver.id}`,
    });
    await deps.webhooks?.dispatchDocument(r.document.id);
  };

  // Fingerprinted, compressed once, cached for a year: the page's scripts, styles, pdf.js and its data.
  const assets = buildAssetCatalog(APPROVAL_ASSETS_BASE, APPROVAL_ASSET_SOURCES);
  serveCatalog(router, assets, deps.pageAssets ?? pageAssetsFor(deps.config, deps.logger));

  router.get('/:token', async (ctx) => {
    pageHeaders(ctx);
    const r = await findPageLink(deps.db, ctx.params.token);
    if (r) addToLogContext({ document_id: r.document.id });
    const account = r ? await accountsStore(deps.db).findById(r.document.accountId) : undefined;
    pageHeaders(ctx, account?.embedOrigins);
    const lang = language(ctx, r?.approver);
    const problem = linkProblem(r);
    ctx.type = 'text/html';
    if (problem) {
      ctx.status = problem.status;
      ctx.body = renderClosedPage(assets, lang, problemText(STRINGS[lang], problem, r));
      return;
    }
    // Viewing never fails the page: an event left undispatched goes out with the webhook outbox sweep. A link
    // preview's fetch (a chat app drawing the link's card, a HEAD request) is not a view (link-preview.ts).
    if (!isLinkPreview(ctx.method, ctx.get('user-agent')))
      await recordView(r!).catch((err: unknown) =>
        deps.logger.warn({ err, documentId: r!.document.id }, 'approver.viewed not recorded or dispatched'),
      );
    // The delegation step: when the document allows it and it is this approver's turn.
    const canDelegate =
      r!.document.allowDelegation &&
      currentApprovers(
        r!.document.workflowType,
        r!.document.status,
        await approversStore(deps.db).listByDocument(r!.document.id),
        (a) => a.status,
      ).some((a) => a.id === r!.approver.id);
    ctx.body = renderApprovalPage({
      assets,
      token: ctx.params.token!,
      lang,
      document: r!.document,
      approver: r!.approver,
      accountName: account?.name ?? '',
      canDelegate,
      needsCode:
        r!.approver.verification === 'whatsapp_otp' &&
        !(await hasVerifiedSession(deps.db, r!.approver.id, ctx.cookies.get(OTP_COOKIE))),
    });
  });

  router.get('/:token/document.pdf', async (ctx) => {
    // Refusals (an unknown token, a spent link) are framed by no one; the file by whom the account allows.
    pdfHeaders(ctx);
    const r = await usablePageLink(deps.db, ctx.params.token);
    const { document } = r;
    addToLogContext({ document_id: document.id });
    pdfHeaders(ctx, (await accountsStore(deps.db).findById(document.accountId))?.embedOrigins);
    // A verified approver's document is theirs to read only once the code proved the number (403 before).
    await pageVerification(deps.db, r, ctx.cookies.get(OTP_COOKIE));
    const stream = await deps.storage.get(document.fileKey);
    if (!stream) throw AppError.notFound('Document file');
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

  async function act(
    ctx: AppContext,
    r: PageLink,
    kind: ActionKind,
    evidence: ActionEvidence,
    image?: Buffer,
  ) {
    const view = await actFromPage(deps, r, kind, evidence, image);
    ok(ctx, { status: view.status, completed: view.completed, total: view.total });
  }

  // Verified approvers: each client address may send or check OTP_IP_PER_MINUTE codes a minute.
  const limitIp = async (ctx: AppContext) => {
    const hit = await deps.rateLimiter.hit(`approval-otp:${ctx.ip}`, otp.ipPerMinute);
    if (!hit.allowed) {
      throw new AppError(
        'rate_limited',
        `Rate limit exceeded: ${otp.ipPerMinute} code requests per minute`,
        {},
        { 'Retry-After': String(Math.max(1, hit.resetAt - Math.floor(Date.now() / 1000))) },
      );
    }
  };
  const otpLink = async (ctx: AppContext, token: string | undefined) => {
    ctx.set('Cache-Control', 'no-store');
    const r = await usablePageLink(deps.db, token);
    addToLogContext({ document_id: r.document.id });
    if (r.approver.verification !== 'whatsapp_otp')
      throw new AppError('verification_not_needed', 'This approver does not need a code');
    await limitIp(ctx);
    return r;
  };

  router.post('/:token/code', async (ctx) => {
    const r = await otpLink(ctx, ctx.params.token);
    const { expiresAt } = await sendApproverCode({ db: deps.db, otp, sender: otpSender }, r.approver);
    ok(ctx, { sent: true, expires_at: expiresAt.toISOString() });
  });

  router.post('/:token/code/verify', async (ctx) => {
    const r = await otpLink(ctx, ctx.params.token);
    const { code } = parseBody(CodeBody, parseJson(await readRawBody(ctx.req, MAX_BODY)));
    const { session, expiresAt } = await verifyApproverCode({ db: deps.db, otp }, r.approver, code);
    const secure = deps.config.http.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
    ctx.append(
      'Set-Cookie',
      `${OTP_COOKIE}=${session}; Path=/a/${ctx.params.token}; Max-Age=${Math.floor(otp.sessionMs / 1000)}; HttpOnly; SameSite=Strict${secure}`,
    );
    ok(ctx, { verified: true, expires_at: expiresAt.toISOString() });
  });

  const verifiedEvidence = async (ctx: AppContext, r: PageLink): Promise<ActionEvidence> => ({
    ...evidenceOf(ctx),
    verifiedBy: await pageVerification(deps.db, r, ctx.cookies.get(OTP_COOKIE)),
  });

  router.post('/:token/complete', async (ctx) => {
    const r = await usablePageLink(deps.db, ctx.params.token);
    addToLogContext({ document_id: r.document.id });
    const evidence = await verifiedEvidence(ctx, r);
    const body = parseBody(CompleteBody, parseJson(await readRawBody(ctx.req, MAX_BODY)));
    const strings = STRINGS[language(ctx, r.approver)];
    if (body.typed_name !== undefined && hasBidiControl(body.typed_name))
      throw AppError.validation({ typed_name: [strings.errors.bidiControls] });
    // Image problems are the approver's to fix, so they are told in the page's language.
    const images = {
      strings,
      limits: { maxSidePx: deps.config.images.maxSidePx },
    };
    let image: Buffer | undefined;
    if (r.approver.actionType === 'sign') {
      if (body.signature_png !== undefined)
        image = await readImageField('signature_png', body.signature_png, images);
      else if (body.typed_name) evidence.typedName = body.typed_name;
      else
        throw AppError.validation({
          signature_png: ['Draw a signature (signature_png) or type your name (typed_name)'],
        });
    } else if (r.approver.actionType === 'stamp') {
      if (body.stamp_png !== undefined) image = await readImageField('stamp_png', body.stamp_png, images);
      else if (body.generated_seal === true) evidence.generatedSeal = true;
      else
        throw AppError.validation({
          stamp_png: ['Upload a stamp image (stamp_png) or choose the generated seal (generated_seal: true)'],
        });
    }
    await act(ctx, r, 'complete', evidence, image);
  });

  router.post('/:token/reject', async (ctx) => {
    const r = await usablePageLink(deps.db, ctx.params.token);
    addToLogContext({ document_id: r.document.id });
    const evidence = await verifiedEvidence(ctx, r);
    const { reason } = parseBody(RejectBody, parseJson(await readRawBody(ctx.req, MAX_BODY)));
    if (reason !== undefined && hasBidiControl(reason))
      throw AppError.validation({ reason: [STRINGS[language(ctx, r.approver)].errors.bidiControls] });
    await act(ctx, r, 'reject', { ...evidence, ...(reason ? { reason } : {}) });
  });

  /**
   * Delegation: `{name, phone, reason}`; the approver must be verified first when they have
   * whatsapp_otp (403). Validation messages are in the page's language.
   */
  router.post('/:token/delegate', async (ctx) => {
    // Every refusal of this step is worded in the page's language: the page shows it as it comes.
    const r = await usablePageLink(deps.db, ctx.params.token, (problem, link) =>
      problemText(STRINGS[language(ctx, link?.approver)], problem, link),
    );
    const strings = STRINGS[language(ctx, r.approver)];
    addToLogContext({ document_id: r.document.id });
    const t = strings.delegate;
    if (!r.document.allowDelegation) throw new AppError('delegation_not_allowed', t.notAllowed);
    const evidence = await verifiedEvidence(ctx, r);
    const body = parseBody(DelegateBody, parseJson(await readRawBody(ctx.req, MAX_BODY)));
    const details = newDetails();
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (name === '' || name.length > LIMITS.textMax || CONTROL.test(name))
      addDetail(details, 'name', t.needName);
    else if (hasBidiControl(name)) addDetail(details, 'name', strings.errors.bidiControls);
    const phone = typeof body.phone === 'string' ? normalizePhone(body.phone) : undefined;
    if (!phone?.ok) addDetail(details, 'phone', t.badPhone);
    const reason = typeof body.reason === 'string' ? body.reason.trim() : '';
    if (reason === '' || CONTROL_BUT_LINES.test(reason)) addDetail(details, 'reason', t.needReason);
    else if (hasBidiControl(reason)) addDetail(details, 'reason', strings.errors.bidiControls);
    else if (reason.length > LIMITS.delegationReasonMax)
      addDetail(details, 'reason', t.reasonTooLong(LIMITS.delegationReasonMax));
    if (Object.keys(details).length > 0 || !phone?.ok) throw AppError.validation(details);
    const view = await delegateFromPage(
      deps,
      r,
      { name, phone: phone.phone, reason },
      {
        at: new Date(evidence.at),
        ip: evidence.ip ?? null,
        userAgent: evidence.userAgent ?? null,
        verifiedBy: evidence.verifiedBy ?? 'none',
      },
      { ...t, refused: (refusal) => refusalText(strings, refusal) },
    );
    ok(ctx, { status: view.status, completed: view.completed, total: view.total, delegated: true });
  });

  return router;
}

/** A workflow's refusal of a page action, in the page's language (REFUSAL_MESSAGES are the API's English). */
function refusalText(strings: PageStrings, refusal: Refusal | 'workflow_closed'): string {
  switch (refusal) {
    case 'not_your_turn':
    case 'not_notified':
      return strings.closed.not_your_turn;
    case 'already_acted':
      return strings.closed.already_acted;
    case 'delegation_not_allowed':
      return strings.delegate.notAllowed;
    default:
      return `${strings.closed.document_closed}.`;
  }
}

/** Why a link cannot be used now, in the page's language (linkProblem's own messages are the API's English). */
function problemText(strings: PageStrings, problem: LinkProblem, link: PageLink | undefined): string {
  if (problem.status === 404 || !link) return strings.errors.gone;
  if (problem.status === 409) return strings.closed.not_your_turn;
  if (link.approver.status === 'delegated') return strings.closed.delegated;
  if (hasActed(link.approver.status)) return strings.closed.already_acted;
  return `${strings.closed.document_closed} (${link.document.status}).`;
}
