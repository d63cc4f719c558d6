import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyPassword } from '../../src/auth/passwords.ts';
import { CLI_SCRIPT } from '../helpers/entry-points.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * `npm run cli -- account:create` as a person and a script run it: a real process against a test database.
 * The password comes from a prompt that echoes nothing (driven here through a pseudo-terminal made by
 * util-linux's `script`), or from standard input with --password-stdin; without a terminal and without that
 * flag the command refuses. --password still works, with a warning about shell history.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = [process.execPath, CLI_SCRIPT, 'account:create'];

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.drop());

const env = () => ({
  ...process.env,
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DATABASE_URL: database.url,
  DATA_DIR: inject('dataDir'),
});

const newEmail = () => `cli-${randomBytes(5).toString('hex')}@example.test`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command with a pipe (not a terminal) as standard input, fed `input` and closed. */
function run(args: string[], input: string | Buffer = ''): Promise<Run> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), ...args], { cwd: ROOT, env: env() });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.on('error', () => undefined); // the command may exit before reading everything
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The command on a pseudo-terminal, answering each prompt when it appears (typing before the prompt would
 * reach a terminal that still echoes). Returns everything the terminal showed.
 */
function runOnTerminal(args: string[], answers: string[]): Promise<{ code: number | null; screen: string }> {
  const command = [...CLI, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: env() });
  let screen = '';
  let answered = 0;
  child.stdout.on('data', (d: Buffer) => {
    screen += d.toString();
    const prompts = screen.match(/Password \(not shown\): |Repeat the password: /g)?.length ?? 0;
    while (answered < prompts && answered < answers.length) child.stdin.write(`${answers[answered++]}\r`);
  });
  child.stderr.on('data', (d: Buffer) => (screen += d.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      child.stdin.end();
      resolve({ code, screen });
    }),
  );
}

async function storedHash(email: string): Promise<string | undefined> {
  const row = await database.db('accounts').where({ email }).first<{ password_hash: string } | undefined>();
  return row?.password_hash;
}

function printedAccount(text: string): { email: string; api_key: string; api_secret: string } {
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as {
    email: string;
    api_key: string;
    api_secret: string;
  };
}

describe('account:create and its password', () => {
  it('reads the password from standard input with --password-stdin, for scripts', async () => {
    const email = newEmail();
    const password = 'a passphrase with spaces, and ümlauts';
    const res = await run(['--email', email, '--name', 'Scripted Co', '--password-stdin'], `${password}\n`);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(printedAccount(res.stdout)).toMatchObject({
      email,
      api_key: expect.stringMatching(/^wq_/) as string,
    });
    expect(await verifyPassword(password, (await storedHash(email))!)).toBe(true);
  });

  it('takes the first line only, and refuses an empty or oversized standard input', async () => {
    const email = newEmail();
    const res = await run(
      ['--email', email, '--name', 'X', '--password-stdin'],
      'first line password\r\nsecond\n',
    );
    expect(res.code).toBe(0);
    expect(await verifyPassword('first line password', (await storedHash(email))!)).toBe(true);

    const empty = await run(['--email', newEmail(), '--name', 'X', '--password-stdin'], '');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('standard input has no password on its first line');

    const huge = await run(
      ['--email', newEmail(), '--name', 'X', '--password-stdin'],
      Buffer.alloc(65 * 1024, 'a'),
    );
    expect(huge.code).toBe(1);
    expect(huge.stderr).toContain('standard input is over 64 KiB');
  });

  it('refuses clearly without a terminal and without --password-stdin, creating nothing', async () => {
    const email = newEmail();
    const res = await run(['--email', email, '--name', 'No Terminal']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('account:create needs a password');
    expect(res.stderr).toContain('--password-stdin');
    expect(res.stdout).toBe('');
    expect(await storedHash(email)).toBeUndefined();
  });

  it('still takes --password, with a warning that it lands in shell history; not together with --password-stdin', async () => {
    const email = newEmail();
    const res = await run(['--email', email, '--name', 'Legacy', '--password', 'correct horse battery']);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('warning: --password puts the password in your shell history');
    expect(await verifyPassword('correct horse battery', (await storedHash(email))!)).toBe(true);

    const both = await run(
      ['--email', newEmail(), '--name', 'X', '--password', 'correct horse battery', '--password-stdin'],
      'correct horse battery\n',
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('give --password or --password-stdin, not both');
  });

  it('asks twice at a terminal, showing nothing of what is typed', async () => {
    const email = newEmail();
    const password = 'typed at the prompt 42';
    const { code, screen } = await runOnTerminal(
      ['--email', email, '--name', 'Prompted Co'],
      [password, password],
    );
    expect(code).toBe(0);
    expect(screen).toContain('Password (not shown): ');
    expect(screen).toContain('Repeat the password: ');
    expect(screen).not.toContain(password);
    expect(screen).not.toContain('typed at');
    expect(printedAccount(screen).email).toBe(email);
    expect(await verifyPassword(password, (await storedHash(email))!)).toBe(true);
  }, 30_000);

  it('refuses at the terminal when the two passwords differ, creating nothing', async () => {
    const email = newEmail();
    const { code, screen } = await runOnTerminal(
      ['--email', email, '--name', 'Typo Co'],
      ['first attempt here', 'second attempt here'],
    );
    expect(code).toBe(1);
    expect(screen).toContain('the two passwords differ');
    expect(await storedHash(email)).toBeUndefined();
  }, 30_000);
});
