import type { ParameterizedContext } from 'koa';
import type { AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import type { AdminSession } from '../db/stores/admin-sessions-store.ts';
import type { Locale, Translate } from './i18n.ts';

/** What the dashboard needs from the service: the database, the configuration, a logger and the secret box. */
export type AdminDeps = Pick<ApiDeps, 'db' | 'config' | 'logger' | 'secrets'> & {
  /** Starts bulk sends (the templates pages); absent, those pages cannot start one. */
  temporal?: ApiDeps['temporal'];
  /** The clock; tests may pin it. */
  now?: () => Date;
};

export interface AdminState extends AppState {
  locale: Locale;
  t: Translate;
  /** Set by `loadSession` when the cookie names a live session. */
  session?: AdminSession;
  /** The cookie named a session that has expired or no longer exists. */
  sessionEnded?: boolean;
}

export type AdminContext = ParameterizedContext<AdminState>;

export function clockOf(deps: AdminDeps): () => Date {
  return deps.now ?? (() => new Date());
}
