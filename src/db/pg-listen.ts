import type pg from 'pg';
import type { Logger } from '../logger.ts';
import type { Db } from './knex.ts';

interface RawConnections {
  acquireRawConnection(): Promise<pg.Client>;
  destroyRawConnection(connection: pg.Client): Promise<void>;
}

/** What a listener is told: each notice, and each time it starts or stops hearing them. */
export interface ListenHandlers {
  /** A notice on one of the channels, with its payload. */
  notice(channel: string, payload: string | undefined): void;
  /** The connection listens (again). Notices sent while it did not are lost: whoever relied on them reads again. */
  up(): void;
  /** The connection is lost; `up` follows once it listens again. */
  down(): void;
}

export interface Listening {
  /** True while notices are heard; while false, any notice may be missed. */
  readonly up: boolean;
  close(): Promise<void>;
}

export interface ListenOptions {
  logger: Logger;
  /** What the notices are for, in log lines ("API key notices"). */
  what: string;
  /** Waits between attempts to (re)open the connection. */
  reconnectDelayMs?: number;
}

/**
 * LISTENs on `channels` on one connection of its own (knex's way to open one outside its pool, with the pool's
 * settings), and opens it again after a loss, every `reconnectDelayMs`, until `close`. Resolves once the first
 * attempt has listened or failed: a caller that starts while PostgreSQL is away works without notices meanwhile.
 * The channels are our own identifiers (constants), never input.
 */
export async function listen(
  db: Db,
  channels: readonly string[],
  handlers: ListenHandlers,
  options: ListenOptions,
): Promise<Listening> {
  const { logger, what } = options;
  const reconnectDelayMs = options.reconnectDelayMs ?? 1_000;
  const raw = db.client as RawConnections;
  let listener: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const lost = (client: pg.Client, err?: unknown) => {
    if (listener !== client) return;
    listener = undefined;
    handlers.down();
    if (closed) return;
    logger.warn({ err }, `${what} interrupted: reading from PostgreSQL until they are back`);
    void raw.destroyRawConnection(client).catch(() => undefined);
    schedule();
  };

  const schedule = () => {
    retry = setTimeout(() => void open(), reconnectDelayMs);
    retry.unref();
  };

  const open = async (): Promise<void> => {
    if (closed) return;
    let client: pg.Client | undefined;
    try {
      client = await raw.acquireRawConnection();
      const c = client;
      c.on('notification', (msg) => {
        if (channels.includes(msg.channel)) handlers.notice(msg.channel, msg.payload);
      });
      c.on('error', (err) => lost(c, err));
      c.on('end', () => lost(c));
      await c.query(channels.map((channel) => `LISTEN ${channel}`).join('; '));
      if (closed) {
        await raw.destroyRawConnection(c);
        return;
      }
      handlers.up();
      listener = c;
    } catch (err) {
      if (client) await raw.destroyRawConnection(client).catch(() => undefined);
      if (closed) return;
      logger.warn({ err }, `cannot listen for ${what}: reading from PostgreSQL meanwhile`);
      schedule();
    }
  };

  await open();

  return {
    get up() {
      return listener !== undefined;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = listener;
      listener = undefined;
      if (client) {
        handlers.down();
        await raw.destroyRawConnection(client).catch(() => undefined);
      }
    },
  };
}
