/**
 * How `account:create` gets a password without it landing in shell history or the process list: typed at a
 * prompt that does not echo (when standard input is a terminal), or read from standard input
 * (`--password-stdin`, for scripts: `printf '%s\n' "$PW" | npm run cli -- account:create … --password-stdin`).
 */

export class PasswordInputError extends Error {
  override name = 'PasswordInputError';
}

/** More than this on standard input is not a password (and is not read into memory). */
const STDIN_LIMIT_BYTES = 64 * 1024;

/** The first line of standard input (its line ending dropped). */
export async function readPasswordFromStdin(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > STDIN_LIMIT_BYTES)
      throw new PasswordInputError(
        `--password-stdin: standard input is over ${STDIN_LIMIT_BYTES / 1024} KiB; give the password alone, on one line`,
      );
    chunks.push(bytes);
  }
  const line = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
  if (!line)
    throw new PasswordInputError('--password-stdin: standard input has no password on its first line');
  return line;
}

export interface Terminal {
  input: NodeJS.ReadStream;
  output: NodeJS.WritableStream;
}

/** Reads one line in raw mode, echoing nothing; Ctrl-C or Ctrl-D (on an empty line) abort. */
function readHidden(term: Terminal, prompt: string): Promise<string> {
  const { input, output } = term;
  // Echo off before the prompt shows: whatever is typed (or pasted) once it is visible must not be echoed.
  input.setRawMode(true);
  input.setEncoding('utf8');
  input.resume();
  output.write(prompt);
  return new Promise<string>((resolve, reject) => {
    let typed = '';
    const finish = (err?: Error) => {
      input.off('data', onData);
      output.write('\n');
      input.setRawMode(false);
      input.pause();
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (data: string) => {
      for (const ch of data) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003' || (ch === '\u0004' && typed === ''))
          return finish(new PasswordInputError('account:create: cancelled at the password prompt'));
        if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else if (ch >= ' ') typed += ch;
      }
    };
    input.on('data', onData);
  });
}

/** Asks twice at the terminal, without echo; refuses when standard input is not a terminal. */
export async function promptPassword(term: Terminal): Promise<string> {
  if (!term.input.isTTY)
    throw new PasswordInputError(
      'account:create needs a password: run it in a terminal to type it at a prompt (nothing is shown), or pipe it in with --password-stdin',
    );
  const password = await readHidden(term, 'Password (not shown): ');
  const again = await readHidden(term, 'Repeat the password: ');
  if (password !== again) throw new PasswordInputError('account:create: the two passwords differ');
  return password;
}

export const PASSWORD_FLAG_WARNING =
  'warning: --password puts the password in your shell history and in the process list; leave it out to be asked at a prompt, or use --password-stdin\n';
