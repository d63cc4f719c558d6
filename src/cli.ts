import { parseArgs } from 'node:util';
import pg from 'pg';
import { createAccountWithKey } from './accounts/create-account.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createDb, type Knex } from './db/knex.ts';
import { migrateLatest } from './db/migrate.ts';
import { resealAll, sealedKeyCensus } from './db/reseal.ts';
import { secretBoxFromSettings } from './auth/secret-box.ts';
import { isAppError } from './errors.ts';
import { createLogger } from './logger.ts';
import { startEmbeddedPostgres } from './runtime/embedded-postgres.ts';
import path from 'node:path';
import { createApprovalClient } from './approval/client.ts';
import { retryFinalization } from './approval/retry-finalization.ts';
import { createTemporalClient } from './temporal/client.ts';
import { temporalConnectionOptions } from './temporal/connection-options.ts';
import {
  PASSWORD_FLAG_WARNING,
  PasswordInputError,
  promptPassword,
  readPasswordFromStdin,
} from './runtime/password-input.ts';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  migrate                                   Apply database migrations
  account:create --email E --name N [--plan basic|business|enterprise] [--password-stdin]
                                            Create an account and its first API key; prints JSON.
                                            The password is asked at a prompt (not shown), or read
                                            from the first line of standard input with
                                            --password-stdin. (--password P still works, with a
                                            warning: it lands in shell history and the process list)
  secrets:reseal [--batch N]                Seal every stored secret again with the current encryption key (the
                                            first of ENCRYPTION_KEYS); progress on stderr, counts as JSON. Safe to
                                            run twice and while the service runs (docs/security.md)
  secrets:status                            How many stored secrets each encryption key seals; prints JSON
  documents:retry-finalization <document id or reference>
                                            Retry a finalization that failed (finalization.state "failed"), or
                                            the write a workflow is parked on (ApprovalAttention); prints JSON.
                                            Uses DATABASE_URL and TEMPORAL_ADDRESS (default: npm start's)
`;

/**
 * The database the CLI works on: DATABASE_URL, or the embedded one (the running `npm start`'s when it is up,
 * otherwise started just for this command).
 */
async function withDatabase<T>(config: Config, run: (db: Knex) => Promise<T>): Promise<T> {
  const logger = createLogger({ logLevel: 'warn' });
  let url = config.database.url;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const embeddedUrl = `postgres://postgres:wathiq-embedded@127.0.0.1:${config.database.embeddedPort}/wathiq`;
    const probe = new pg.Client({ connectionString: embeddedUrl, connectionTimeoutMillis: 1000 });
    const running = await probe.connect().then(
      () => true,
      () => false,
    );
    await probe.end().catch(() => undefined);
    if (running) url = embeddedUrl;
    else {
      const embedded = await startEmbeddedPostgres({
        dir: path.join(config.dataDir, 'postgres', 'pgdata'),
        port: config.database.embeddedPort,
        logger,
        database: 'wathiq',
      });
      url = embedded.url('wathiq');
      stopEmbedded = () => embedded.stop();
    }
  }
  const db = createDb(url, { poolMax: 2 });
  try {
    await migrateLatest(db, { secrets: secretBoxFromSettings(config.encryption) });
    return await run(db);
  } finally {
    await db.destroy();
    await stopEmbedded?.();
  }
}

/** The new account's password: the prompt, standard input, or (with a warning) the command line. */
async function accountPassword(values: { password?: string; 'password-stdin'?: boolean }): Promise<string> {
  if (values.password !== undefined && values['password-stdin'])
    throw new PasswordInputError('account:create: give --password or --password-stdin, not both');
  if (values['password-stdin']) return readPasswordFromStdin(process.stdin);
  if (values.password !== undefined) {
    process.stderr.write(PASSWORD_FLAG_WARNING);
    return values.password;
  }
  return promptPassword({ input: process.stdin, output: process.stderr });
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // The CLI signs nothing, so it needs no signing certificate: it reads the configuration as the API does.
  const config = loadConfig(process.env, { role: 'api' });
  switch (command) {
    case 'migrate': {
      await withDatabase(config, () => Promise.resolve());
      process.stdout.write('migrations are up to date\n');
      return 0;
    }
    case 'account:create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          email: { type: 'string' },
          password: { type: 'string' },
          'password-stdin': { type: 'boolean' },
          name: { type: 'string' },
          plan: { type: 'string' },
        },
        strict: true,
      });
      const password = await accountPassword(values);
      const result = await withDatabase(config, (db) =>
        createAccountWithKey(db, {
          email: values.email ?? '',
          password,
          name: values.name ?? '',
          plan: (values.plan ?? 'basic') as 'basic',
        }),
      );
      process.stdout.write(
        `${JSON.stringify(
          {
            account_id: result.account.id,
            email: result.account.email,
            plan: result.account.plan,
            api_key: result.key.apiKey.key,
            api_secret: result.key.secret,
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    case 'secrets:reseal': {
      const { values } = parseArgs({ args: rest, options: { batch: { type: 'string' } }, strict: true });
      const batch = values.batch === undefined ? 500 : Number(values.batch);
      if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) {
        process.stderr.write('--batch: a whole number from 1 to 10000\n');
        return 2;
      }
      const secrets = secretBoxFromSettings(config.encryption);
      const report = await withDatabase(config, (db) =>
        resealAll(db, secrets, {
          batch,
          onProgress: (c) =>
            process.stderr.write(
              `${c.table}.${c.column}: ${c.resealed} resealed, ${c.changedMeanwhile} changed meanwhile, ${c.failed} failed\n`,
            ),
        }),
      );
      const out = {
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
      };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      // Values no configured key opens are left as they are; the operator must not drop a key they need.
      return report.failed > 0 ? 1 : 0;
    }
    case 'secrets:status': {
      const secrets = secretBoxFromSettings(config.encryption);
      const census = await withDatabase(config, (db) => sealedKeyCensus(db));
      const columns = [...census].map(([c, keys]) => ({
        table: c.table,
        column: c.column,
        keys_in_use: keys,
      }));
      process.stdout.write(`${JSON.stringify({ current_key_id: secrets.currentKeyId, columns }, null, 2)}\n`);
      return 0;
    }
    case 'documents:retry-finalization': {
      const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true, strict: true });
      if (positionals.length !== 1) {
        process.stderr.write(USAGE);
        return 2;
      }
      const temporal = createTemporalClient({
        ...(config.temporal.address
          ? temporalConnectionOptions({ ...config.temporal, address: config.temporal.address })
          : { address: `127.0.0.1:${config.temporal.devPort}` }),
        namespace: config.temporal.namespace,
      });
      try {
        const approvals = createApprovalClient({
          client: temporal.client,
          taskQueue: config.temporal.taskQueue,
          answerTimeoutMs: config.approvalAnswerTimeoutMs,
        });
        const result = await withDatabase(config, (db) =>
          retryFinalization({ db, approvals }, positionals[0]!),
        );
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      } finally {
        await temporal.close();
      }
      return 0;
    }
    default:
      process.stderr.write(USAGE);
      return command ? 2 : 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (isAppError(err)) {
      process.stderr.write(`${JSON.stringify({ error: err.message, details: err.details }, null, 2)}\n`);
    } else if (err instanceof ConfigError || err instanceof PasswordInputError) {
      process.stderr.write(`${err.message}\n`);
    } else {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    }
    process.exit(1);
  },
);
