import type { ParseArgsOptionsConfig } from 'node:util';
import type { Config } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import type { TemporalClientHandle } from '../temporal/client.ts';

/** A command line the parser or a command refuses: exit code 2, with the command's usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where a command writes: results to stdout (JSON with --json), progress and warnings to stderr. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export interface CliContext {
  io: CliIo;
  /** --json: one JSON document on stdout, for scripts. */
  json: boolean;
  /** Read and validated on first use, so `--help` works without a configuration. */
  config(): Config;
  withDb<T>(run: (db: Knex) => Promise<T>): Promise<T>;
  withTemporal<T>(run: (temporal: TemporalClientHandle) => Promise<T>): Promise<T>;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface CliCommand {
  /** The words that name it: `['keys', 'create']`. */
  words: readonly string[];
  /** Older spellings still accepted (`account:create`). */
  aliases?: readonly string[];
  /** What follows the words in its usage line. */
  synopsis: string;
  summary: string;
  /** Options and arguments explained, for `--help`. */
  details: string;
  options: ParseArgsOptionsConfig;
  /** How many positional arguments it takes. */
  positionals: { min: number; max: number };
  /** The exit code: 0 done, 1 failed (a usage mistake throws UsageError). */
  run(ctx: CliContext, args: ParsedArgs): Promise<number>;
}

export const usageLine = (c: CliCommand): string =>
  `wathiq ${c.words.join(' ')}${c.synopsis ? ` ${c.synopsis}` : ''}`;

/** Prints a result: JSON with --json, otherwise the human text. */
export function printResult(ctx: CliContext, human: () => string, data: unknown): void {
  ctx.io.out(ctx.json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

/** Columns padded to their widest cell, for human output. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
