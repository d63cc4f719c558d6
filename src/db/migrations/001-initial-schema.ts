import type { Knex } from 'knex';

/**
 * The schema every feature stands on. Ids are UUIDs (webhook deliveries: bigint, as the spec's numeric delivery
 * ids). Timestamps are timestamptz, stored in UTC. Every table an API key can reach carries account_id, and each
 * list the API serves has an index that starts with it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pgcrypto');

  await knex.schema.createTable('accounts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('name', 255).notNullable();
    t.string('email', 320).notNullable();
    t.text('password_hash').notNullable();
    t.string('plan', 16).notNullable().defaultTo('basic');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE accounts ADD CONSTRAINT accounts_plan_check CHECK (plan IN ('basic','business','enterprise'))`,
  );
  await knex.raw('CREATE UNIQUE INDEX accounts_email_unique ON accounts (lower(email))');

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.string('key', 64).notNullable().unique();
    t.string('secret_hash', 128).notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });

  await knex.schema.createTable('reference_counters', (t) => {
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.integer('year').notNullable();
    t.integer('last_sequence').notNullable();
    t.primary(['account_id', 'year']);
  });

  await knex.schema.createTable('documents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('reference', 32).notNullable();
    t.string('title_ar', 255).notNullable();
    t.string('title_en', 255).notNullable();
    t.string('department', 32);
    t.string('workflow_type', 16).notNullable().defaultTo('sequential');
    t.string('status', 16).notNullable().defaultTo('draft');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.string('file_key', 512).notNullable();
    t.string('file_name', 255);
    t.string('file_sha256', 64).notNullable();
    t.bigInteger('file_size').notNullable();
    t.integer('page_count').notNullable();
    t.string('final_file_key', 512);
    t.string('final_token', 64).unique();
    t.string('final_sha256', 64);
    t.string('workflow_id', 128);
    t.text('rejection_reason');
    t.timestamp('sent_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['account_id', 'reference']);
    t.index(['account_id', 'created_at']);
    t.index(['account_id', 'status', 'created_at']);
  });
  await knex.raw(`ALTER TABLE documents ADD CONSTRAINT documents_status_check
    CHECK (status IN ('draft','pending','in_progress','approved','rejected','expired','voided'))`);
  await knex.raw(`ALTER TABLE documents ADD CONSTRAINT documents_workflow_type_check
    CHECK (workflow_type IN ('sequential','parallel'))`);

  await knex.schema.createTable('approvers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('document_id').notNullable().references('documents.id').onDelete('CASCADE');
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('name_ar', 255).notNullable();
    t.string('name_en', 255).notNullable();
    t.string('phone', 20).notNullable();
    t.string('role_ar', 255);
    t.string('role_en', 255);
    t.string('language', 2);
    t.string('action_type', 16).notNullable().defaultTo('sign');
    t.integer('order_index').notNullable();
    t.integer('placement_page');
    t.double('placement_x');
    t.double('placement_y');
    t.double('placement_width');
    t.string('status', 16).notNullable().defaultTo('waiting');
    t.string('link_token', 64).unique();
    t.timestamp('notified_at', { useTz: true });
    t.string('notification_status', 16);
    t.text('notification_error');
    t.timestamp('acted_at', { useTz: true });
    t.string('action_channel', 16);
    t.string('action_ip', 64);
    t.text('action_user_agent');
    t.string('action_message_id', 128);
    t.string('signature_key', 512);
    t.string('typed_name', 255);
    t.text('rejection_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['document_id', 'order_index']);
    t.index(['account_id']);
  });
  await knex.raw(`ALTER TABLE approvers ADD CONSTRAINT approvers_action_type_check
    CHECK (action_type IN ('sign','stamp','approve_only','review_only'))`);

  await knex.schema.createTable('whatsapp_messages', (t) => {
    t.bigIncrements('id').primary();
    t.string('wamid', 128).unique();
    t.string('direction', 8).notNullable();
    t.uuid('account_id').references('accounts.id').onDelete('CASCADE');
    t.uuid('document_id').references('documents.id').onDelete('CASCADE');
    t.uuid('approver_id').references('approvers.id').onDelete('CASCADE');
    t.string('phone', 20).notNullable();
    t.string('kind', 32).notNullable();
    t.jsonb('payload').notNullable();
    t.string('status', 16);
    t.timestamp('status_at', { useTz: true });
    t.jsonb('status_error');
    t.string('idempotency_key', 200).unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['approver_id', 'created_at']);
  });

  await knex.schema.createTable('document_events', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.uuid('document_id').references('documents.id').onDelete('SET NULL');
    t.uuid('approver_id').references('approvers.id').onDelete('SET NULL');
    t.string('event', 64).notNullable();
    t.jsonb('data').notNullable();
    t.string('dedupe_key', 200).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
    t.index(['document_id', 'id']);
  });

  await knex.schema.createTable('webhooks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.text('secret').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.string('disabled_reason', 255);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE');
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('event_id').references('document_events.id').onDelete('SET NULL');
    t.string('event', 64).notNullable();
    t.text('body').notNullable();
    t.string('status', 16).notNullable().defaultTo('pending');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['webhook_id', 'event_id']);
    t.index(['webhook_id', 'created_at']);
  });

  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt_number').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.integer('status_code');
    t.integer('duration_ms').notNullable();
    t.string('error_class', 64);
    t.text('error_message');
    t.unique(['delivery_id', 'attempt_number']);
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('key', 255).notNullable();
    t.string('method', 8).notNullable();
    t.text('path').notNullable();
    t.string('request_hash', 64).notNullable();
    t.integer('response_status');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.unique(['account_id', 'key']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('rate_limit_windows', (t) => {
    t.string('bucket', 128).notNullable();
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.integer('count').notNullable();
    t.primary(['bucket', 'window_start']);
    t.index(['window_start']);
  });

  await knex.schema.createTable('admin_sessions', (t) => {
    t.string('id_hash', 64).primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('csrf_token', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('login_attempts', (t) => {
    t.string('email', 320).primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('pings', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('workflow_id', 128).notNullable().unique();
    t.string('message', 255).notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'pings',
    'login_attempts',
    'admin_sessions',
    'rate_limit_windows',
    'idempotency_keys',
    'webhook_delivery_attempts',
    'webhook_deliveries',
    'webhooks',
    'document_events',
    'whatsapp_messages',
    'approvers',
    'documents',
    'reference_counters',
    'api_keys',
    'accounts',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
