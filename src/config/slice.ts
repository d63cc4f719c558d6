import type { z } from 'zod';

export type NodeEnv = 'development' | 'test' | 'production';

/** The process roles of `node dist/main.js [api|worker]`; `all` is `npm start`. */
export type ConfigRole = 'all' | 'api' | 'worker';

/** What every slice may read besides its own variables, worked out once before any slice is built. */
export interface LoadContext {
  nodeEnv: NodeEnv;
  /** Which process reads the configuration: only a process that runs the worker signs PDFs. */
  role: ConfigRole;
  /** DATA_DIR, resolved. */
  dataDir: string;
  /** HOST, or its default for NODE_ENV. */
  host: string;
  port: number;
}

/**
 * Refusals are reported one stage at a time, in this order: a later stage is checked only once every earlier one
 * passes, and one stage lists the refusals of all its checks, in the order named, slice by slice. The third stage
 * is what the deployment needs as a whole: WhatsApp's credentials, what production refuses, what the signer needs.
 */
export const CHECK_STAGES = [
  ['storage'],
  ['sign-in'],
  ['whatsapp', 'production', 'signer'],
  ['temporal-tls'],
  ['signature-level'],
  ['encryption-keys'],
  ['pdf-limits'],
  ['fair-shares'],
  ['ports'],
] as const;
export type CheckName = (typeof CHECK_STAGES)[number][number];

/** A slice's variables once parsed: defaults applied, strings turned into numbers, booleans and the like. */
export type SliceEnv<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

/**
 * One area of the configuration: its variables (each with its type, bounds, default and `.describe()` text, from
 * which docs/configuration.md and .env.example are generated), its checks, and the part of `Config` it builds.
 */
export interface ConfigSlice<S extends z.ZodRawShape = z.ZodRawShape, P extends object = object> {
  /** The heading of its section in docs/configuration.md and .env.example. */
  title: string;
  /** What its section says before the variables, if anything. */
  about?: string;
  env: S;
  /** Defaults worked out from other values (the reference cannot read them off the schema), by variable. */
  derivedDefaults?: { [K in keyof S]?: string };
  /** Checks across its variables, by name (CHECK_STAGES says when each is reported); each refusal starts with a variable's name. */
  checks?: { [K in CheckName]?: (e: SliceEnv<S>, ctx: LoadContext) => string[] };
  /** Its part of `Config`. */
  build(e: SliceEnv<S>, ctx: LoadContext): P;
}

export function defineSlice<S extends z.ZodRawShape, P extends object>(
  slice: ConfigSlice<S, P>,
): ConfigSlice<S, P> {
  return slice;
}
