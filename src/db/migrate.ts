import type { Knex } from 'knex';
import type { MigrationContext } from './migration-context.ts';
import * as initialSchema from './migrations/001-initial-schema.ts';
import * as whatsapp from './migrations/002-whatsapp.ts';
import * as admin from './migrations/004-admin.ts';
import * as approval from './migrations/005-approval.ts';
import * as webhookDispatch from './migrations/006-webhook-dispatch.ts';
import * as exposures from './migrations/007-exposures.ts';
import * as dropPings from './migrations/008-drop-pings.ts';
import * as finalizationState from './migrations/009-finalization-state.ts';
import * as outbox from './migrations/010-outbox.ts';
import * as eventSequence from './migrations/011-event-sequence.ts';
import * as actionEvidence from './migrations/012-action-evidence.ts';
import * as documentSignature from './migrations/013-document-signature.ts';
import * as verificationTokens from './migrations/014-verification-tokens.ts';
import * as archiveTimestamps from './migrations/015-archive-timestamps.ts';
import * as apiKeyNotify from './migrations/017-api-key-notify.ts';
import * as approverVerification from './migrations/019-approver-verification.ts';
import * as autoReminders from './migrations/018-auto-reminders.ts';
import * as embedding from './migrations/020-embedding.ts';
import * as whatsappIdentity from './migrations/021-whatsapp-identity.ts';
import * as delegation from './migrations/022-delegation.ts';
import * as ccRecipients from './migrations/024-cc-recipients.ts';
import * as documentCounts from './migrations/025-document-counts.ts';
import * as delegationOutcome from './migrations/026-delegation-outcome.ts';
import * as inboundHandled from './migrations/027-inbound-handled.ts';
import * as evidenceAcceptedNotify from './migrations/028-evidence-accepted-notify.ts';
import * as documentSentNotify from './migrations/029-document-sent-notify.ts';
import * as tokensAtRest from './migrations/030-tokens-at-rest.ts';
import * as sealedWebhooks from './migrations/031-sealed-webhooks.ts';
import * as sealedMessages from './migrations/032-sealed-messages.ts';
import * as secondFactor from './migrations/036-second-factor.ts';
import * as loginChallenges from './migrations/037-login-challenges.ts';
import * as templatesAndBulkSends from './migrations/040-templates-and-bulk-sends.ts';
import * as approvalSignals from './migrations/045-approval-signals.ts';
import * as approvalSignalLeases from './migrations/048-approval-signal-leases.ts';
import * as whatsappRateLimitMarks from './migrations/049-whatsapp-rate-limit-marks.ts';

export type { MigrationContext };

interface Migration {
  up(knex: Knex, context: MigrationContext): Promise<void>;
  down(knex: Knex, context: MigrationContext): Promise<void>;
}

/**
 * Migrations are imported, not discovered on disk, so the same list runs under tsx, vitest and the compiled
 * build. Add a new file and one line here.
 */
const migrations: Record<string, Migration> = {
  '001-initial-schema': initialSchema,
  '002-whatsapp': whatsapp,
  '004-admin': admin,
  '005-approval': approval,
  '006-webhook-dispatch': webhookDispatch,
  '007-exposures': exposures,
  '008-drop-pings': dropPings,
  '009-finalization-state': finalizationState,
  '010-outbox': outbox,
  '011-event-sequence': eventSequence,
  '012-action-evidence': actionEvidence,
  '013-document-signature': documentSignature,
  '014-verification-tokens': verificationTokens,
  '015-archive-timestamps': archiveTimestamps,
  '017-api-key-notify': apiKeyNotify,
  '018-auto-reminders': autoReminders,
  '019-approver-verification': approverVerification,
  '020-embedding': embedding,
  '021-whatsapp-identity': whatsappIdentity,
  '022-delegation': delegation,
  '024-cc-recipients': ccRecipients,
  '025-document-counts': documentCounts,
  '026-delegation-outcome': delegationOutcome,
  '027-inbound-handled': inboundHandled,
  '028-evidence-accepted-notify': evidenceAcceptedNotify,
  '029-document-sent-notify': documentSentNotify,
  '030-tokens-at-rest': tokensAtRest,
  '031-sealed-webhooks': sealedWebhooks,
  '032-sealed-messages': sealedMessages,
  '036-second-factor': secondFactor,
  '037-login-challenges': loginChallenges,
  '040-templates-and-bulk-sends': templatesAndBulkSends,
  '045-approval-signals': approvalSignals,
  '048-approval-signal-leases': approvalSignalLeases,
  '049-whatsapp-rate-limit-marks': whatsappRateLimitMarks,
};

const sourceFor = (context: MigrationContext): Knex.MigrationSource<string> => ({
  getMigrations: () => Promise.resolve(Object.keys(migrations).sort()),
  getMigrationName: (name) => name,
  getMigration: (name) => {
    const m = migrations[name];
    if (!m) throw new Error(`Unknown migration ${name}`);
    return Promise.resolve({
      up: (knex: Knex) => m.up(knex, context),
      down: (knex: Knex) => m.down(knex, context),
    });
  },
});

/**
 * True when knex's table records exactly the migrations above as applied: one query, no lock (every warm start).
 * Anything else (no table yet, a migration missing, a name we do not know) is for knex to apply or refuse.
 */
async function upToDate(knex: Knex): Promise<boolean> {
  let rows: { name: string }[];
  try {
    rows = await knex('knex_migrations').select('name');
  } catch (err) {
    if ((err as { code?: unknown }).code === '42P01') return false; // undefined_table: a new database
    throw err;
  }
  const applied = new Set(rows.map((r) => r.name));
  const known = Object.keys(migrations);
  return rows.length === known.length && known.every((name) => applied.has(name));
}

export async function migrateLatest(knex: Knex, context: MigrationContext = {}): Promise<string[]> {
  if (await upToDate(knex)) return [];
  const [, applied] = (await knex.migrate.latest({ migrationSource: sourceFor(context) })) as [
    number,
    string[],
  ];
  return applied;
}

/** Undoes the last migration applied, or the one named. */
export async function migrateDown(knex: Knex, context: MigrationContext = {}, name?: string): Promise<void> {
  await knex.migrate.down({ migrationSource: sourceFor(context), ...(name && { name }) });
}

export async function migrateRollbackAll(knex: Knex, context: MigrationContext = {}): Promise<void> {
  await knex.migrate.rollback({ migrationSource: sourceFor(context) }, true);
}
