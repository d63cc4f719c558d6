import type Router from '@koa/router';
import { issueApiKey, listApiKeys, revokeApiKey } from '../../features/accounts/api-keys.ts';
import { API_SCOPES } from '../../auth/api-key-format.ts';
import { isAppError } from '../../errors.ts';
import type { AdminContext, AdminDeps, AdminState } from '../context.ts';
import { csrfProtection, formField } from '../csrf.ts';
import { AdminPageError } from '../errors.ts';
import type { Translate } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { isUuid, renderPage, seeOther } from '../render.ts';
import { requireSession } from '../sessions.ts';
import {
  keysPage,
  type DefaultsForm,
  type EmbedForm,
  type KeysView,
  type NewKeyForm,
} from '../views/keys-page.ts';
import { accountSettings, type Account } from '../../features/accounts/account-settings.ts';
import { LIMITS, VERIFICATIONS, type ReminderSettings, type Verification } from '../../domain/model.ts';
import { checkEmbedOrigin, EMBED_ORIGINS_MAX } from '../../features/accounts/embed-origins.ts';
import { pageContextOf, withUserText } from '../views/page.ts';
import { hasBidiControl } from '../../domain/bidi.ts';
import { html, type SafeHtml } from '../../http/html.ts';

const EMPTY_FORM: NewKeyForm = { name: '', scopes: API_SCOPES, errors: {} };

/** The defaults form as the account stands. */
function defaultsOf(account: Account | undefined): DefaultsForm {
  const r = account?.defaultReminders;
  return {
    firstAfterHours: r ? String(r.first_after_hours) : '',
    everyHours: r ? String(r.every_hours) : '',
    max: r ? String(r.max) : '',
    verification: account?.defaultVerification ?? 'none',
    errors: {},
  };
}

const REMINDER_FIELDS = [
  ['first_after_hours', 'firstAfterHours', 1, LIMITS.reminderHoursMax],
  ['every_hours', 'everyHours', 1, LIMITS.reminderHoursMax],
  ['max', 'max', 0, LIMITS.remindersMaxCeiling],
] as const;

/**
 * Reads the defaults form with the API's rules (PUT /account/settings): the three reminder numbers all given
 * (whole numbers in range) or all empty (the server default), and a known verification.
 */
function readDefaultsForm(
  ctx: AdminContext,
  t: Translate,
): { form: DefaultsForm; reminders?: ReminderSettings | null; verification?: Verification } {
  const field = (name: string) => {
    const raw = formField(ctx, name);
    return typeof raw === 'string' ? raw.trim().slice(0, 32) : '';
  };
  const form: DefaultsForm = {
    firstAfterHours: field('first_after_hours'),
    everyHours: field('every_hours'),
    max: field('max'),
    verification: field('default_verification'),
    errors: {},
  };
  const given = REMINDER_FIELDS.filter(([, key]) => form[key] !== '');
  let reminders: ReminderSettings | null | undefined = null;
  if (given.length > 0 && given.length < REMINDER_FIELDS.length) {
    form.errors.reminders = t('errorRemindersAll');
    reminders = undefined;
  } else if (given.length > 0) {
    const values: Partial<Record<keyof ReminderSettings, number>> = {};
    for (const [name, key, min, max] of REMINDER_FIELDS) {
      const n = /^\d{1,6}$/.test(form[key]) ? Number(form[key]) : NaN;
      if (!(n >= min && n <= max)) {
        form.errors[name] = t('errorWholeNumber', { min, max });
        reminders = undefined;
      } else values[name] = n;
    }
    if (reminders !== undefined)
      reminders = {
        first_after_hours: values.first_after_hours!,
        every_hours: values.every_hours!,
        max: values.max!,
      };
  }
  const verification = VERIFICATIONS.find((v) => v === form.verification);
  if (!verification) form.errors.verification = t('errorVerification');
  return { form, ...(reminders !== undefined && { reminders }), ...(verification && { verification }) };
}

/** Reads the create form; checkboxes arrive as one string or an array, unknown scopes are ignored. */
function readKeyForm(ctx: AdminContext, t: Translate): NewKeyForm {
  const rawName = formField(ctx, 'name');
  const name = typeof rawName === 'string' ? rawName.trim() : '';
  const rawScopes = formField(ctx, 'scopes');
  const given = Array.isArray(rawScopes) ? rawScopes : [rawScopes];
  const scopes = API_SCOPES.filter((s) => given.includes(s));
  const errors: NewKeyForm['errors'] = {};
  if (!name) errors.name = t('errorNameRequired');
  else if ([...name].length > 255) errors.name = t('errorNameTooLong');
  else if (hasBidiControl(name)) errors.name = t('errorBidiControls');
  if (!scopes.length) errors.scopes = t('errorScopesRequired');
  return { name, scopes, errors };
}

type ShowExtra = Pick<KeysView, 'form' | 'created'> & { embed?: EmbedForm; defaults?: DefaultsForm };

/** The keys page: the account's keys, its embedding origins and its defaults, with what the request adds. */
async function showKeys(ctx: AdminContext, deps: AdminDeps, status: number, extra: ShowExtra): Promise<void> {
  const session = ctx.state.session!;
  const [keys, account] = await Promise.all([
    listApiKeys(deps.db, session.accountId),
    accountSettings(deps.db).find(session.accountId),
  ]);
  const embed = extra.embed ?? { value: (account?.embedOrigins ?? []).join('\n') };
  renderPage(
    ctx,
    status,
    keysPage(pageContextOf(ctx), {
      plan: session.plan,
      requestsPerMinute: deps.config.plans[session.plan].requestsPerMinute,
      keys,
      ...extra,
      embed,
      defaults: extra.defaults ?? defaultsOf(account),
    }),
  );
}

/** Reads the embedding form: one origin a line, each checked as PUT /account/settings checks it. */
function readEmbedForm(ctx: AdminContext): { value: string; origins: string[]; error?: SafeHtml } {
  const t = ctx.state.t;
  const raw = formField(ctx, 'embed_origins');
  const value = typeof raw === 'string' ? raw.slice(0, 4096) : '';
  const lines = [
    ...new Set(
      value
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean),
    ),
  ];
  const origins: string[] = [];
  for (const line of lines) {
    const r = checkEmbedOrigin(line);
    if (!r.ok) {
      const error = r.publicSuffix
        ? withUserText(t, 'errorEmbedPublicSuffix', { origin: line.slice(0, 80), suffix: r.publicSuffix })
        : withUserText(t, 'errorEmbedOrigin', { origin: line.slice(0, 80) });
      return { value, origins, error };
    }
    origins.push(r.origin);
  }
  if (origins.length > EMBED_ORIGINS_MAX)
    return { value, origins, error: html`${t('errorEmbedTooMany', { max: EMBED_ORIGINS_MAX })}` };
  return { value, origins };
}

export function mountKeyRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const show = (ctx: AdminContext, status: number, extra: ShowExtra) => showKeys(ctx, deps, status, extra);

  router.get(ADMIN_PATHS.keys, requireSession(), (ctx) => show(ctx, 200, { form: EMPTY_FORM }));

  // The create form posts here; a reload or a bookmark of this address lands on the keys page.
  router.get(ADMIN_PATHS.createKey, (ctx) => seeOther(ctx, ADMIN_PATHS.keys));

  router.post(ADMIN_PATHS.createKey, requireSession(), csrfProtection(deps.config), async (ctx) => {
    const form = readKeyForm(ctx, ctx.state.t);
    if (form.errors.name || form.errors.scopes) return show(ctx, 422, { form });
    const max = deps.config.fairShares.maxActiveKeys;
    const issued = await issueApiKey(deps.db, {
      accountId: ctx.state.session!.accountId,
      name: form.name,
      scopes: form.scopes,
      maxActive: max,
    }).catch((err: unknown) => {
      if (isAppError(err) && err.code === 'validation_failed') return undefined;
      throw err;
    });
    if (!issued)
      return show(ctx, 422, {
        form: { ...form, errors: { limit: ctx.state.t('errorTooManyKeys', { max }) } },
      });
    // The secret is rendered into this response only; it is never stored and never shown again.
    await show(ctx, 200, {
      form: EMPTY_FORM,
      created: { name: issued.apiKey.name, key: issued.apiKey.key, secret: issued.secret },
    });
  });

  router.get(ADMIN_PATHS.embedOrigins, (ctx) => seeOther(ctx, ADMIN_PATHS.keys));

  router.post(ADMIN_PATHS.embedOrigins, requireSession(), csrfProtection(deps.config), async (ctx) => {
    const { value, origins, error } = readEmbedForm(ctx);
    if (error) return show(ctx, 422, { form: EMPTY_FORM, embed: { value, error } });
    await accountSettings(deps.db).update(ctx.state.session!.accountId, { embedOrigins: origins });
    seeOther(ctx, `${ADMIN_PATHS.keys}?m=embed_saved`);
  });

  router.get(ADMIN_PATHS.defaults, (ctx) => seeOther(ctx, ADMIN_PATHS.keys));

  router.post(ADMIN_PATHS.defaults, requireSession(), csrfProtection(deps.config), async (ctx) => {
    const read = readDefaultsForm(ctx, ctx.state.t);
    if (Object.keys(read.form.errors).length > 0 || read.reminders === undefined || !read.verification)
      return show(ctx, 422, { form: EMPTY_FORM, defaults: read.form });
    await accountSettings(deps.db).update(ctx.state.session!.accountId, {
      defaultReminders: read.reminders,
      defaultVerification: read.verification,
    });
    seeOther(ctx, `${ADMIN_PATHS.keys}?m=defaults_saved`);
  });

  router.post('/admin/api/keys/:id/revoke', requireSession(), csrfProtection(deps.config), async (ctx) => {
    const id = ctx.params.id;
    const accountId = ctx.state.session!.accountId;
    if (!isUuid(id)) throw AdminPageError.notFound();
    const result = await revokeApiKey(deps.db, { accountId, id });
    // Keys of another account are indistinguishable from keys that do not exist.
    if (result === 'not_found') throw AdminPageError.notFound();
    seeOther(ctx, `${ADMIN_PATHS.keys}?m=${result}`);
  });
}
