import { createAccountWithKey } from '../../features/accounts/create-account.ts';
import { createApprovalClient } from '../../features/approval/client.ts';
import { retryFinalization } from '../../features/approval/retry-finalization.ts';
import { secretBoxFromSettings } from '../../auth/secret-box.ts';
import { resealAll, sealedKeyCensus } from '../../db/reseal.ts';
import {
  PASSWORD_FLAG_WARNING,
  PasswordInputError,
  promptPassword,
  readPasswordFromStdin,
} from '../../runtime/password-input.ts';
import { UsageError, type CliCommand, type CliContext } from '../command.ts';

// These commands print JSON whether or not --json is given: scripts read their output as it always was.
const printJson = (ctx: CliContext, data: unknown) => ctx.io.out(`${JSON.stringify(data, null, 2)}\n`);

/** The new account's password: the prompt, standard input, or (with a warning) the command line. */
async function accountPassword(ctx: CliContext, password: unknown, fromStdin: unknown): Promise<string> {
  if (password !== undefined && fromStdin)
    throw new PasswordInputError('account:create: give --password or --password-stdin, not both');
  if (fromStdin) return readPasswordFromStdin(process.stdin);
  if (typeof password === 'string') {
    ctx.io.err(PASSWORD_FLAG_WARNING);
    return password;
  }
  return promptPassword({ input: process.stdin, output: process.stderr });
}

export const setupCommands: CliCommand[] = [
  {
    words: ['migrate'],
    synopsis: '',
    summary: 'Apply database migrations',
    details: 'Applies every migration not yet applied to DATABASE_URL (or the embedded database).',
    options: {},
    positionals: { min: 0, max: 0 },
    async run(ctx) {
      await ctx.withDb(() => Promise.resolve());
      ctx.io.out('migrations are up to date\n');
      return 0;
    },
  },
  {
    words: ['accounts', 'create'],
    aliases: ['account:create'],
    synopsis: '--email E --name N [--plan basic|business|enterprise] [--password-stdin]',
    summary: 'Create an account and its first API key; prints JSON',
    details: `The password is asked at a prompt (not shown), or read from the first line of standard input with
--password-stdin. (--password P still works, with a warning: it lands in shell history and the process list.)`,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      name: { type: 'string' },
      plan: { type: 'string' },
    },
    positionals: { min: 0, max: 0 },
    async run(ctx, { values }) {
      const password = await accountPassword(ctx, values.password, values['password-stdin']);
      const result = await ctx.withDb((db) =>
        createAccountWithKey(db, {
          email: typeof values.email === 'string' ? values.email : '',
          password,
          name: typeof values.name === 'string' ? values.name : '',
          plan: (typeof values.plan === 'string' ? values.plan : 'basic') as 'basic',
        }),
      );
      printJson(ctx, {
        account_id: result.account.id,
        email: result.account.email,
        plan: result.account.plan,
        api_key: result.key.apiKey.key,
        api_secret: result.key.secret,
      });
      return 0;
    },
  },
  {
    words: ['secrets', 'reseal'],
    aliases: ['secrets:reseal'],
    synopsis: '[--batch N]',
    summary: 'Seal every stored secret again with the current encryption key; prints JSON',
    details: `The current key is the first of ENCRYPTION_KEYS. Progress on stderr, counts as JSON. Safe to run twice
and while the service runs (docs/security.md). Exits 1 when a value no configured key opens was left as it is.`,
    options: { batch: { type: 'string' } },
    positionals: { min: 0, max: 0 },
    async run(ctx, { values }) {
      const batch = values.batch === undefined ? 500 : Number(values.batch);
      if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) {
        throw new UsageError('--batch: a whole number from 1 to 10000');
      }
      const secrets = secretBoxFromSettings(ctx.config().encryption);
      const report = await ctx.withDb((db) =>
        resealAll(db, secrets, {
          batch,
          onProgress: (c) =>
            ctx.io.err(
              `${c.table}.${c.column}: ${c.resealed} resealed, ${c.changedMeanwhile} changed meanwhile, ${c.failed} failed\n`,
            ),
        }),
      );
      printJson(ctx, {
        current_key_id: report.currentKeyId,
        resealed: report.resealed,
        failed: report.failed,
        keys_in_use: report.keysInUse,
        columns: report.columns.map((c) => ({
          table: c.table,
          column: c.column,
          resealed: c.resealed,
          changed_meanwhile: c.changedMeanwhile,
          failed: c.failed,
          failed_keys: c.failedKeys,
          keys_in_use: c.keysInUse,
        })),
      });
      // Values no configured key opens are left as they are; the operator must not drop a key they need.
      return report.failed > 0 ? 1 : 0;
    },
  },
  {
    words: ['secrets', 'status'],
    aliases: ['secrets:status'],
    synopsis: '',
    summary: 'How many stored secrets each encryption key seals; prints JSON',
    details: 'Counts, per sealed column, the values each key of ENCRYPTION_KEYS seals.',
    options: {},
    positionals: { min: 0, max: 0 },
    async run(ctx) {
      const secrets = secretBoxFromSettings(ctx.config().encryption);
      const census = await ctx.withDb((db) => sealedKeyCensus(db));
      const columns = [...census].map(([c, keys]) => ({
        table: c.table,
        column: c.column,
        keys_in_use: keys,
      }));
      printJson(ctx, { current_key_id: secrets.currentKeyId, columns });
      return 0;
    },
  },
  {
    words: ['documents', 'retry-finalization'],
    aliases: ['documents:retry-finalization'],
    synopsis: '<document id or reference>',
    summary: 'Retry a failed finalization, or the write a workflow is parked on; prints JSON',
    details: `Retries a finalization that failed (finalization.state "failed"), or the write a workflow is parked on
(ApprovalAttention). Uses DATABASE_URL and TEMPORAL_ADDRESS (default: npm start's).`,
    options: {},
    positionals: { min: 1, max: 1 },
    async run(ctx, { positionals }) {
      const config = ctx.config();
      const result = await ctx.withTemporal((temporal) => {
        const approvals = createApprovalClient({
          client: temporal.client,
          taskQueue: config.temporal.taskQueue,
          answerTimeoutMs: config.approvalAnswerTimeoutMs,
        });
        return ctx.withDb((db) => retryFinalization({ db, approvals }, positionals[0]!));
      });
      printJson(ctx, result);
      return 0;
    },
  },
];
