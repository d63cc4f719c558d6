import Router from '@koa/router';
import type { Knex } from '../../db/knex.ts';
import { accountSettings, type Account } from './account-settings.ts';
import { authOf, type AppState } from '../../http/context.ts';
import { ok } from '../../http/respond.ts';
import { parseBody } from '../../http/validation.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { route } from '../../api/openapi/route.ts';
import { jsonBody } from '../../api/route-helpers.ts';
import { AccountSettingsResource, AccountSettingsUpdate } from './schemas.ts';
import { envelope } from '../../api/schemas/envelopes.ts';

const TAGS = ['Account'];

const settingsOf = (account: Account) => ({
  embed_origins: account.embedOrigins,
  default_reminders: account.defaultReminders,
  default_verification: account.defaultVerification,
});

/** GET/PUT /account/settings: the settings of the key's own account (embedding). */
export function createAccountRouter(deps: { db: Knex }, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const settings = accountSettings(deps.db);

  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/account/settings',
      operationId: 'getAccountSettings',
      summary: "The account's settings",
      description:
        'embed_origins: who may frame the approval page. default_reminders and default_verification: what documents and approvers created without their own take.',
      tags: TAGS,
      auth: 'documents:read',
      responses: { 200: { description: 'The settings', schema: envelope(AccountSettingsResource) } },
      errors: [],
    },
    async (ctx) => {
      ok(ctx, settingsOf(await settings.get(authOf(ctx).accountId)));
    },
  );

  route(
    router,
    openapi,
    {
      method: 'put',
      path: '/account/settings',
      operationId: 'updateAccountSettings',
      summary: "Change the account's settings",
      description:
        'Only the given fields change. embed_origins replaces the list: https origins (scheme, host, optional port; https://*.example.com for subdomains), at most 10; 422 for anything else. default_reminders ({first_after_hours, every_hours, max}, or null to clear) applies to documents sent afterwards without their own reminders; default_verification (none or whatsapp_otp) to approvers added afterwards without their own verification.',
      tags: TAGS,
      auth: 'documents:write',
      body: { json: AccountSettingsUpdate, required: false },
      responses: { 200: { description: 'The settings', schema: envelope(AccountSettingsResource) } },
      errors: [400, 415, 422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const update = parseBody(AccountSettingsUpdate, jsonBody(ctx));
      const account = await settings.update(accountId, {
        ...(update.embed_origins !== undefined && { embedOrigins: update.embed_origins }),
        ...(update.default_reminders !== undefined && { defaultReminders: update.default_reminders }),
        ...(update.default_verification !== undefined && {
          defaultVerification: update.default_verification,
        }),
      });
      ok(ctx, settingsOf(account));
    },
  );

  return router;
}
