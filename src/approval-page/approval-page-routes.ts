import Router from '@koa/router';
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
import { canDelegateFromPage, recordPageView } from '../features/approval/page-view.ts';
import { hasActed } from '../features/approval/rules.ts';
import { accountSettings } from '../features/accounts/account-settings.ts';
import { buildAssetCatalog, type AssetCatalog } from '../http/asset-catalog.ts';
import { serveCatalog } from '../http/page-assets.ts';
import { pageAssetsFor } from '../http/precompressed.ts';
import type { AppContext, AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import { postsOnlyAs } from '../http/cross-site-posts.ts';
import { ok } from '../http/respond.ts';
import type { WebhookDispatcher } from '../features/webhooks/dispatch.ts';
import { AppError } from '../errors.ts';
import { addToLogContext } from '../logger.ts';
import { languageFor } from '../whatsapp/index.ts';
import { readCode, readCompletion, readDelegation, readRejection } from './action-bodies.ts';
import { APPROVAL_ASSET_SOURCES, APPROVAL_ASSETS_BASE } from './assets.ts';
import { isLinkPreview } from './link-preview.ts';
import { pageHeaders, pdfHeaders } from './page-headers.ts';
import { renderApprovalPage, renderClosedPage } from './render-page.ts';
import type { Language } from '../domain/model.ts';
import { STRINGS, type PageStrings } from './strings.ts';

type ApprovalPageDeps = Pick<
  ApiDeps,
  'db' | 'config' | 'logger' | 'storage' | 'rateLimiter' | 'pageAssets' | 'secrets'
> & {
  approvals: ApprovalClient;
  otpSender?: OtpSender;
  webhooks?: Pick<WebhookDispatcher, 'dispatchRecorded'>;
};

/** What each group of the page's routes is mounted with. */
interface Mount {
  router: Router<AppState>;
  deps: ApprovalPageDeps;
  assets: AssetCatalog;
}

/** The page's language: `?lang=` when given, else the approver's (by their number), else Arabic. */
function language(ctx: AppContext, approver?: PageLink['approver']): Language {
  const asked = ctx.query.lang;
  if (asked === 'ar' || asked === 'en') return asked;
  return approver ? languageFor(approver.phone, approver.language) : 'ar';
}

/** Where the account lets its documents be framed; none when the account is gone. */
async function embedOriginsOf(deps: ApprovalPageDeps, accountId: string) {
  const account = await accountSettings(deps.db).find(accountId);
  return { name: account?.name ?? '', embedOrigins: account?.embedOrigins };
}

/** The link, usable, named in the path; the document is added to the request's log lines. */
async function linkOf(deps: ApprovalPageDeps, ctx: AppContext): Promise<PageLink> {
  const r = await usablePageLink(deps.db, (ctx.params as Record<string, string | undefined>).token);
  addToLogContext({ document_id: r.document.id });
  return r;
}

const evidenceOf = (ctx: AppContext): ActionEvidence => ({
  at: new Date().toISOString(),
  channel: 'page',
  ip: ctx.ip,
  userAgent: ctx.get('user-agent').slice(0, 512),
});

/** The action's evidence, with how the approver was verified (403 when a code is needed and not yet given). */
const verifiedEvidence = async (
  deps: ApprovalPageDeps,
  ctx: AppContext,
  r: PageLink,
): Promise<ActionEvidence> => ({
  ...evidenceOf(ctx),
  verifiedBy: await pageVerification(deps.db, r, ctx.cookies.get(OTP_COOKIE)),
});

/**
 * The approver's public page (docs/product-rules.md §5): `GET /a/{token}` in Arabic (right-to-left) or English, the
 * PDF rendered in the page, and its JSON endpoints. A token is one approver's, at least 256 random bits, and
 * unusable (410) once they acted or the document left pending/in_progress.
 */
export function createApprovalPageRouter(deps: ApprovalPageDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/a' });
  // The page's script sends JSON; a form another site posts here (text/plain) is refused before anything happens.
  router.use(postsOnlyAs(['application/json'], 'Send the body as application/json'));
  // Fingerprinted, compressed once, cached for a year: the page's scripts, styles, pdf.js and its data.
  const assets = buildAssetCatalog(APPROVAL_ASSETS_BASE, APPROVAL_ASSET_SOURCES);
  serveCatalog(router, assets, deps.pageAssets ?? pageAssetsFor(deps.config, deps.logger));
  const mount: Mount = { router, deps, assets };
  mountPage(mount);
  mountCode(mount);
  mountActions(mount);
  return router;
}

/** The page itself and its PDF. */
function mountPage({ router, deps, assets }: Mount): void {
  router.get('/:token', async (ctx) => {
    pageHeaders(ctx);
    const r = await findPageLink(deps.db, ctx.params.token);
    if (r) addToLogContext({ document_id: r.document.id });
    const account = r ? await embedOriginsOf(deps, r.document.accountId) : undefined;
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
      await recordPageView(deps, r!).catch((err: unknown) =>
        deps.logger.warn({ err, documentId: r!.document.id }, 'approver.viewed not recorded or dispatched'),
      );
    ctx.body = renderApprovalPage({
      assets,
      token: ctx.params.token!,
      lang,
      document: r!.document,
      approver: r!.approver,
      accountName: account?.name ?? '',
      // The delegation step: when the document allows it and it is this approver's turn.
      canDelegate: await canDelegateFromPage(deps.db, r!),
      needsCode:
        r!.approver.verification === 'whatsapp_otp' &&
        !(await hasVerifiedSession(deps.db, r!.approver.id, ctx.cookies.get(OTP_COOKIE))),
    });
  });

  router.get('/:token/document.pdf', async (ctx) => {
    // Refusals (an unknown token, a spent link) are framed by no one; the file by whom the account allows.
    pdfHeaders(ctx);
    const r = await linkOf(deps, ctx);
    const { document } = r;
    pdfHeaders(ctx, (await embedOriginsOf(deps, document.accountId)).embedOrigins);
    // A verified approver's document is theirs to read only once the code proved the number (403 before).
    await pageVerification(deps.db, r, ctx.cookies.get(OTP_COOKIE));
    const stream = await deps.storage.get(document.fileKey);
    if (!stream) throw AppError.notFound('Document file');
    ctx.set('Content-Disposition', `inline; filename="${document.reference}.pdf"`);
    ctx.type = 'application/pdf';
    ctx.body = stream;
  });
}

/** Verified approvers: a code sent by WhatsApp, and checked. */
function mountCode({ router, deps }: Mount): void {
  const otpSender = deps.otpSender ?? createOtpSender(deps.config, { logger: deps.logger });
  const otp = deps.config.otp;

  // Each client address may send or check OTP_IP_PER_MINUTE codes a minute.
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
  const otpLink = async (ctx: AppContext) => {
    ctx.set('Cache-Control', 'no-store');
    const r = await linkOf(deps, ctx);
    if (r.approver.verification !== 'whatsapp_otp')
      throw new AppError('verification_not_needed', 'This approver does not need a code');
    await limitIp(ctx);
    return r;
  };

  router.post('/:token/code', async (ctx) => {
    const r = await otpLink(ctx);
    const { expiresAt } = await sendApproverCode({ db: deps.db, otp, sender: otpSender }, r.approver);
    ok(ctx, { sent: true, expires_at: expiresAt.toISOString() });
  });

  router.post('/:token/code/verify', async (ctx) => {
    const r = await otpLink(ctx);
    const code = await readCode(ctx);
    const { session, expiresAt } = await verifyApproverCode({ db: deps.db, otp }, r.approver, code);
    const secure = deps.config.http.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
    ctx.append(
      'Set-Cookie',
      `${OTP_COOKIE}=${session}; Path=/a/${ctx.params.token}; Max-Age=${Math.floor(otp.sessionMs / 1000)}; HttpOnly; SameSite=Strict${secure}`,
    );
    ok(ctx, { verified: true, expires_at: expiresAt.toISOString() });
  });
}

/** Complete, reject and delegate. */
function mountActions({ router, deps }: Mount): void {
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

  router.post('/:token/complete', async (ctx) => {
    const r = await linkOf(deps, ctx);
    const evidence = await verifiedEvidence(deps, ctx, r);
    const strings = STRINGS[language(ctx, r.approver)];
    const limits = { maxSidePx: deps.config.images.maxSidePx };
    const { image, ...given } = await readCompletion(ctx, r, { strings, limits });
    await act(ctx, r, 'complete', { ...evidence, ...given }, image);
  });

  router.post('/:token/reject', async (ctx) => {
    const r = await linkOf(deps, ctx);
    const evidence = await verifiedEvidence(deps, ctx, r);
    const reason = await readRejection(ctx, STRINGS[language(ctx, r.approver)]);
    await act(ctx, r, 'reject', { ...evidence, ...reason });
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
    const evidence = await verifiedEvidence(deps, ctx, r);
    const delegate = await readDelegation(ctx, strings);
    const view = await delegateFromPage(
      deps,
      r,
      delegate,
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
