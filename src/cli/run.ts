import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { isAppError } from '../errors.ts';
import { PasswordInputError } from '../runtime/password-input.ts';
import { UsageError, usageLine, type CliCommand, type CliContext, type CliIo } from './command.ts';
import { accountCommands } from './commands/accounts.ts';
import { documentCommands } from './commands/documents.ts';
import { openapiCommands } from './commands/openapi.ts';
import { setupCommands } from './commands/setup.ts';
import { whatsappCommands } from './commands/whatsapp.ts';
import { workerCommands } from './commands/workers.ts';
import { workflowCommands } from './commands/workflows.ts';
import { withDatabase, withTemporal } from './resources.ts';

/** Every command, in the order `--help` lists them (by name). */
export const COMMANDS: readonly CliCommand[] = [
  ...accountCommands,
  ...setupCommands,
  ...documentCommands,
  ...openapiCommands,
  ...workflowCommands,
  ...workerCommands,
  ...whatsappCommands,
].sort((a, b) => a.words.join(' ').localeCompare(b.words.join(' ')));

const GLOBAL = `Options of every command:
  --json       print the result as one JSON document (progress stays on stderr)
  -h, --help   this command's help
Exit codes: 0 done, 1 failed, 2 usage mistake.`;

function overview(commands: readonly CliCommand[], heading = 'Commands:'): string {
  const lines = commands.map((c) => [`wathiq ${c.words.join(' ')}`, c.summary] as const);
  const width = Math.max(...lines.map(([l]) => l.length));
  return [
    'Usage: npx wathiq <command> [options]   (also: npm run cli -- <command> [options])',
    '',
    heading,
    ...lines.map(([l, s]) => `  ${l.padEnd(width)}  ${s}`),
    '',
    GLOBAL,
    'Run `npx wathiq <command> --help` for one command.',
    '',
  ].join('\n');
}

const commandHelp = (c: CliCommand): string =>
  [
    `Usage: ${usageLine(c)}`,
    '',
    c.summary,
    '',
    c.details,
    c.aliases ? `Also spelled: ${c.aliases.join(', ')}` : '',
    GLOBAL,
    '',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');

/** The command argv names, and the arguments after its words; or the commands whose words argv starts. */
function resolve(argv: readonly string[]): { command: CliCommand; rest: string[] } | { group: CliCommand[] } {
  const alias = COMMANDS.find((c) => c.aliases?.includes(argv[0] ?? ''));
  if (alias) return { command: alias, rest: argv.slice(1) };
  const named = COMMANDS.filter((c) => c.words.every((w, i) => argv[i] === w)).sort(
    (a, b) => b.words.length - a.words.length,
  );
  if (named[0]) return { command: named[0], rest: argv.slice(named[0].words.length) };
  const words = argv.filter((a) => !a.startsWith('-'));
  return { group: COMMANDS.filter((c) => words.length > 0 && words.every((w, i) => c.words[i] === w)) };
}

function parse(command: CliCommand, rest: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), usageLine(command));
  }
  return parsed;
}

/**
 * Runs one command line and returns its exit code: 0 done, 1 failed, 2 a usage mistake (unknown command or
 * option, missing argument). Errors are one line on stderr (a JSON object with --json).
 */
export async function runCli(argv: readonly string[], io: CliIo, env: NodeJS.ProcessEnv): Promise<number> {
  if (
    argv.length === 0 ||
    (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help'))
  ) {
    io.out(overview(COMMANDS));
    return 0;
  }
  const found = resolve(argv);
  const json = argv.includes('--json');
  if ('group' in found) {
    const asked = argv.includes('--help') || argv.includes('-h');
    if (found.group.length > 0 && asked) {
      io.out(overview(found.group, `Commands of ${argv.filter((a) => !a.startsWith('-')).join(' ')}:`));
      return 0;
    }
    io.err(`Unknown command: ${argv.filter((a) => !a.startsWith('-')).join(' ') || argv.join(' ')}\n\n`);
    io.err(overview(found.group.length > 0 ? found.group : COMMANDS));
    return 2;
  }
  const { command, rest } = found;
  let config: Config | undefined;
  // The CLI signs nothing, so it needs no signing certificate: it reads the configuration as the API does.
  const loadOnce = () => (config ??= loadConfig(env, { role: 'api' }));
  const ctx: CliContext = {
    io,
    json,
    config: loadOnce,
    withDb: (run) => withDatabase(loadOnce(), run),
    withTemporal: (run) => withTemporal(loadOnce(), run),
  };
  try {
    const { values, positionals } = parse(command, rest);
    if (values.help) {
      io.out(commandHelp(command));
      return 0;
    }
    const { min, max } = command.positionals;
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(
        positionals.length < min ? 'Missing argument' : `Unexpected argument: ${positionals[max]!}`,
        usageLine(command),
      );
    }
    return await command.run(ctx, { values, positionals });
  } catch (err) {
    return report(err, io, json, command);
  }
}

function report(err: unknown, io: CliIo, json: boolean, command: CliCommand): number {
  if (err instanceof UsageError) {
    io.err(
      `${err.message}\nUsage: ${err.usage ?? usageLine(command)}\nRun \`npx wathiq ${command.words.join(' ')} --help\` for more.\n`,
    );
    return 2;
  }
  if (isAppError(err)) {
    io.err(
      json
        ? `${JSON.stringify({ error: { code: err.code, message: err.message, details: err.details } }, null, 2)}\n`
        : `${JSON.stringify({ error: err.message, details: err.details }, null, 2)}\n`,
    );
    return 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ConfigError || err instanceof PasswordInputError || !json) io.err(`${message}\n`);
  else io.err(`${JSON.stringify({ error: { code: 'failed', message } }, null, 2)}\n`);
  return 1;
}
