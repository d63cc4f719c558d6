import { issueApiKey } from '../../features/accounts/api-keys.ts';
import { API_SCOPES, type ApiScope } from '../../auth/api-key-format.ts';
import type { Knex } from '../../db/knex.ts';
import { accountsStore, type Account } from '../../features/accounts/accounts-store.ts';
import { apiKeysStore } from '../../features/accounts/api-keys-store.ts';
import { AppError } from '../../errors.ts';
import { UsageError, printResult, table, type CliCommand } from '../command.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whole number in [min, max] from an option, or a usage error naming it. */
export function wholeNumber(value: unknown, name: string, fallback: number, max: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || n < min || n > max) {
    throw new UsageError(`--${name}: a whole number from ${min} to ${max}`);
  }
  return n;
}

async function findAccount(db: Knex, idOrEmail: string): Promise<Account> {
  const key = idOrEmail.trim();
  const account = UUID.test(key)
    ? await accountsStore(db).findById(key)
    : (await accountsStore(db).findCredentialsByEmail(key))?.account;
  if (!account) throw AppError.notFound(`Account ${key}`);
  return account;
}

/** The scopes of `--scopes a,b`: each one known, none twice. */
function parseScopes(value: unknown): ApiScope[] {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`--scopes: a comma-separated list of ${API_SCOPES.join(', ')}`);
  }
  const scopes = value.split(',').map((s) => s.trim());
  const unknown = scopes.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new UsageError(
      `--scopes: unknown ${unknown.map((s) => JSON.stringify(s)).join(', ')}; known: ${API_SCOPES.join(', ')}`,
    );
  }
  return [...new Set(scopes as ApiScope[])];
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const accountCommands: CliCommand[] = [
  {
    words: ['accounts', 'list'],
    synopsis: '[--limit N] [--offset N] [--json]',
    summary: 'List accounts, oldest first',
    details: '--limit (default 100, at most 10000) and --offset page through the accounts.',
    options: { limit: { type: 'string' }, offset: { type: 'string' } },
    positionals: { min: 0, max: 0 },
    async run(ctx, { values }) {
      const limit = wholeNumber(values.limit, 'limit', 100, 10_000, 1);
      const offset = wholeNumber(values.offset, 'offset', 0, Number.MAX_SAFE_INTEGER);
      const accounts = await ctx.withDb((db) => accountsStore(db).list({ limit, offset }));
      const rows = accounts.map((a) => ({
        id: a.id,
        email: a.email,
        name: a.name,
        plan: a.plan,
        created_at: a.createdAt.toISOString(),
      }));
      printResult(
        ctx,
        () =>
          rows.length === 0
            ? 'No accounts.'
            : table(
                ['ID', 'EMAIL', 'PLAN', 'CREATED', 'NAME'],
                rows.map((r) => [r.id, r.email, r.plan, r.created_at, r.name]),
              ),
        { accounts: rows },
      );
      return 0;
    },
  },
  {
    words: ['keys', 'create'],
    synopsis: '--account <id|email> --scopes <scope,…> [--name N] [--json]',
    summary: 'Create an API key; its secret is printed once',
    details: `Scopes: ${API_SCOPES.join(', ')}. Only the secret's hash is stored: copy it now.
Refused when the account already has API_KEYS_MAX_PER_ACCOUNT active keys.`,
    options: { account: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
    positionals: { min: 0, max: 0 },
    async run(ctx, { values }) {
      if (typeof values.account !== 'string' || values.account.trim() === '') {
        throw new UsageError('--account: the account id or email');
      }
      const scopes = parseScopes(values.scopes);
      const name = typeof values.name === 'string' ? values.name : 'Created with wathiq keys create';
      if (name.trim() === '' || name.length > 100) throw new UsageError('--name: 1 to 100 characters');
      const maxActive = ctx.config().fairShares.maxActiveKeys;
      const issued = await ctx.withDb(async (db) => {
        const account = await findAccount(db, values.account as string);
        return issueApiKey(db, { accountId: account.id, name, scopes, maxActive });
      });
      const key = issued.apiKey;
      printResult(
        ctx,
        () =>
          [
            `Key ${key.id} created for account ${key.accountId} (${key.scopes.join(', ')}).`,
            `api_key:    ${key.key}`,
            `api_secret: ${issued.secret}`,
            'The secret is shown only now: store it where the client reads it.',
          ].join('\n'),
        {
          id: key.id,
          account_id: key.accountId,
          name: key.name,
          scopes: key.scopes,
          api_key: key.key,
          api_secret: issued.secret,
          created_at: key.createdAt.toISOString(),
        },
      );
      return 0;
    },
  },
  {
    words: ['keys', 'revoke'],
    synopsis: '<key id> [--json]',
    summary: 'Revoke an API key',
    details: 'The key stops authenticating at once in every API process (they hear of it from PostgreSQL).',
    options: {},
    positionals: { min: 1, max: 1 },
    async run(ctx, { positionals }) {
      const id = positionals[0]!.trim();
      if (!UUID.test(id)) throw new UsageError(`${JSON.stringify(id)} is not a key id (a UUID)`);
      const revoked = await ctx.withDb(async (db) => {
        const key = await apiKeysStore(db).findByIdUnscoped(id);
        if (!key) throw AppError.notFound(`API key ${id}`);
        if (!(await apiKeysStore(db).revoke(key.accountId, id))) {
          throw AppError.conflict(
            'key_already_revoked',
            `API key ${id} was already revoked at ${iso(key.revokedAt) ?? 'an earlier time'}`,
          );
        }
        return (await apiKeysStore(db).findByIdUnscoped(id))!;
      });
      printResult(ctx, () => `Key ${revoked.id} (${revoked.key}) revoked.`, {
        id: revoked.id,
        account_id: revoked.accountId,
        api_key: revoked.key,
        revoked_at: iso(revoked.revokedAt),
      });
      return 0;
    },
  },
];
