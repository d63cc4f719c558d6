import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createDocument,
  eventually,
  messagesTo,
  PHONES,
  quickRepliesOf,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { runWathiq } from './run-wathiq.ts';

/**
 * The operator's CLI as a real process (bin/wathiq.mjs, as `npx wathiq` runs it) against the test service's
 * database and Temporal server: its help and exit codes, accounts and keys, a document's view, and the replay of
 * a real workflow's history and of one it does not match.
 */

let h: FlowHarness;
let env: Record<string, string>;
const UI = 'https://temporal-ui.example.test';

beforeAll(async () => {
  h = await startFlowHarness();
  env = {
    DATABASE_URL: h.service.database.url,
    TEMPORAL_ADDRESS: h.service.config.temporal.address!,
    TEMPORAL_NAMESPACE: h.service.config.temporal.namespace,
    TEMPORAL_TASK_QUEUE: h.service.taskQueue,
    TEMPORAL_UI_URL: UI,
    DATA_DIR: inject('dataDir'),
  };
});
afterAll(() => h?.close());

const json = <T>(text: string) => JSON.parse(text) as T;

describe('help and exit codes', () => {
  it('prints the commands with --help, and each command its own usage', async () => {
    const all = await runWathiq(['--help'], {});
    expect(all.code).toBe(0);
    for (const c of [
      'accounts list',
      'keys create',
      'keys revoke',
      'documents show',
      'workflows replay',
      'whatsapp templates check',
      'migrate',
    ])
      expect(all.stdout).toContain(`wathiq ${c}`);
    const one = await runWathiq(['keys', 'create', '--help'], {});
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Usage: wathiq keys create --account <id|email> --scopes');
    const group = await runWathiq(['keys', '--help'], {});
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('wathiq keys revoke');
    expect(group.stdout).not.toContain('wathiq accounts list');
  });

  it('exits 2 on a usage mistake, before touching anything', async () => {
    const mistakes = [
      ['frobnicate'],
      ['keys'],
      ['accounts', 'list', '--bogus'],
      ['accounts', 'list', '--limit', 'many'],
      ['accounts', 'list', '--limit', '0'],
      ['keys', 'revoke'],
      ['keys', 'revoke', 'a', 'b'],
      ['keys', 'revoke', '__proto__'],
      ['keys', 'create', '--account', 'x@example.test'],
      ['keys', 'create', '--account', 'x@example.test', '--scopes', 'documents:read,__proto__'],
      ['workflows', 'replay', 'x', '--history', '/nonexistent/history.json'],
    ];
    // No database behind DATABASE_URL: a command that reached it would fail otherwise (exit 1).
    const runs = await Promise.all(
      mistakes.map((args) => runWathiq(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })),
    );
    runs.forEach((run, i) => {
      expect(run.code, `${mistakes[i]!.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/Usage: |Unknown command/);
      expect(run.stdout).toBe('');
    });
  });

  it('keeps the old spellings of the setup commands', async () => {
    const status = await runWathiq(['secrets:status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(json<{ current_key_id: string }>(status.stdout).current_key_id).toBeTruthy();
  });
});

describe('accounts and keys', () => {
  it('lists accounts, for people and as JSON', async () => {
    const other = await h.service.createAccount();
    const listed = await runWathiq(['accounts', 'list', '--json', '--limit', '10000'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const ids = json<{ accounts: { id: string }[] }>(listed.stdout).accounts.map((a) => a.id);
    expect(ids).toEqual(expect.arrayContaining([h.account.accountId, other.accountId]));
    const human = await runWathiq(['accounts', 'list'], env);
    expect(human.stdout).toMatch(/^ID\s+EMAIL\s+PLAN/);
    expect(human.stdout).toContain(other.accountId);
    const paged = await runWathiq(
      ['accounts', 'list', '--json', '--limit', '1', '--offset', String(ids.length - 1)],
      env,
    );
    expect(json<{ accounts: { id: string }[] }>(paged.stdout).accounts.map((a) => a.id)).toEqual([
      ids.at(-1),
    ]);
  });

  it('creates a key whose secret is printed once and works, then revokes it', async () => {
    const account = await h.service.createAccount();
    const email = (
      await h.service.database.db('accounts').where({ id: account.accountId }).first<{ email: string }>()
    ).email;
    const created = await runWathiq(
      ['keys', 'create', '--account', email, '--scopes', 'documents:read,documents:read', '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const key = json<{
      id: string;
      account_id: string;
      scopes: string[];
      api_key: string;
      api_secret: string;
    }>(created.stdout);
    expect(key).toMatchObject({ account_id: account.accountId, scopes: ['documents:read'] });
    const authorization = `Bearer ${key.api_key}:${key.api_secret}`;
    expect((await h.service.request('/documents', { headers: { authorization } })).status).toBe(200);
    // The scope is what was asked: no writing.
    expect((await h.service.request('/webhooks', { headers: { authorization } })).status).toBe(403);
    // Only the hash is stored.
    const stored = await h.service.database
      .db('api_keys')
      .where({ id: key.id })
      .first<Record<string, unknown>>();
    expect(JSON.stringify(stored)).not.toContain(key.api_secret);

    const human = await runWathiq(
      ['keys', 'create', '--account', account.accountId, '--scopes', 'webhooks:read'],
      env,
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/api_secret: \S+/);

    const revoked = await runWathiq(['keys', 'revoke', key.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Key ${key.id}`);
    await eventually(async () =>
      (await h.service.request('/documents', { headers: { authorization } })).status === 401
        ? true
        : undefined,
    );
    const again = await runWathiq(['keys', 'revoke', key.id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already revoked');
  });

  it('fails with exit 1 and a clear message for an account or key that does not exist', async () => {
    const noAccount = await runWathiq(
      ['keys', 'create', '--account', '__proto__', '--scopes', 'documents:read'],
      env,
    );
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('Account __proto__ not found');
    const noKey = await runWathiq(['keys', 'revoke', '00000000-0000-4000-8000-000000000000', '--json'], env);
    expect(noKey.code).toBe(1);
    expect(json<{ error: { code: string } }>(noKey.stderr).error.code).toBe('not_found');
  });
});

describe('documents show and workflows replay', () => {
  let doc: { id: string; reference: string };
  beforeAll(async () => {
    doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'CLI Approver', phone: PHONES.saudiA, action_type: 'approve_only' }],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const message = await eventually(() => messagesTo(h, PHONES.saudiA)[0]);
    expect((await tapButton(h, { from: PHONES.saudiA, payload: quickRepliesOf(message)[0]! })).status).toBe(
      200,
    );
    await eventually(
      async () => ((await statusOf(h, doc.id)).status === 'approved' ? true : undefined),
      60_000,
    );
  });

  it("shows a document's state, approvers, events and the workflow's link, by reference or id", async () => {
    const shown = await runWathiq(['documents', 'show', doc.reference, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    const view = json<{
      id: string;
      status: string;
      workflow: { id: string; ui_url: string };
      approvers: { status: string; channel: string }[];
      events: { event: string }[];
    }>(shown.stdout);
    expect(view).toMatchObject({ id: doc.id, status: 'approved' });
    expect(view.approvers).toEqual([expect.objectContaining({ status: 'completed', channel: 'whatsapp' })]);
    expect(view.events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['document.sent', 'document.approved']),
    );
    expect(view.workflow.ui_url).toBe(
      `${UI}/namespaces/${encodeURIComponent(env.TEMPORAL_NAMESPACE!)}/workflows/${view.workflow.id}`,
    );
    const human = await runWathiq(['documents', 'show', doc.id], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`${doc.reference}  approved`);
    expect(human.stdout).toContain(view.workflow.ui_url);
    const missing = await runWathiq(['documents', 'show', 'WQT-1999-000001'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not found');
  });

  it("replays the workflow's history from the server through the current code", async () => {
    const workflowId = `document-${doc.id}`;
    const replayed = await runWathiq(['workflows', 'replay', workflowId, '--json'], env);
    expect(replayed.code, replayed.stderr).toBe(0);
    const result = json<{ replayed: boolean; events: number }>(replayed.stdout);
    expect(result.replayed).toBe(true);
    expect(result.events).toBeGreaterThan(5);
    expect(replayed.stderr).toContain(`fetched ${result.events} events`);
    expect(replayed.stderr).toContain(`replaying ${result.events} events`);

    const unknown = await runWathiq(['workflows', 'replay', 'document-no-such-workflow'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not found');
  });

  /** A committed history, changed by `edit`, replayed from a file: the result and the exit code. */
  async function replayEdited(
    committed: string,
    edit: (events: Record<string, Record<string, unknown>>[]) => void,
  ) {
    const file = path.resolve(import.meta.dirname, '../histories', committed);
    const history = json<{ events: Record<string, Record<string, unknown>>[] }>(await readFile(file, 'utf8'));
    edit(history.events);
    const edited = path.join(
      tmpdir(),
      `wathiq-replay-${process.pid}-${Math.random().toString(36).slice(2)}.json`,
    );
    await writeFile(edited, JSON.stringify(history));
    try {
      const run = await runWathiq(['workflows', 'replay', 'edited', '--history', edited, '--json'], env);
      return {
        code: run.code,
        stderr: run.stderr,
        result: json<{ replayed: boolean; failure?: { kind: string; message: string } }>(run.stdout),
      };
    } finally {
      await rm(edited, { force: true });
    }
  }

  it('replays a committed history file, and exits 1 as non-deterministic when the code schedules otherwise', async () => {
    const same = await replayEdited('v9/delegated-approved.json', () => undefined);
    expect(same.code, same.stderr).toBe(0);
    expect(same.result.replayed).toBe(true);
    // The history says another activity was scheduled where the code schedules its own.
    const changed = await replayEdited('v9/delegated-approved.json', (events) => {
      const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes)!;
      scheduled.activityTaskScheduledEventAttributes!.activityType = { name: 'anotherActivity' };
    });
    expect(changed.code).toBe(1);
    expect(changed.result).toMatchObject({ replayed: false, failure: { kind: 'nondeterminism' } });
    expect(changed.result.failure!.message).toContain('anotherActivity');
  });

  it('exits 1 on the history of another workflow shape', async () => {
    // A webhook delivery's events, presented as an approval workflow.
    const other = await replayEdited('webhooks/gone.json', (events) => {
      events[0]!.workflowExecutionStartedEventAttributes!.workflowType = { name: 'approvalWorkflow' };
    });
    expect(other.code).toBe(1);
    expect(other.result.replayed).toBe(false);
  });
});
