import type { ParameterizedContext } from 'koa';
import type { ApiScope } from '../auth/api-key-format.ts';
import type { Plan } from '../domain/plans.ts';

/** Who is calling: set by the authentication middleware, read by every protected route. */
export interface AuthContext {
  accountId: string;
  apiKeyId: string;
  key: string;
  scopes: readonly ApiScope[];
  plan: Plan;
}

export interface AppState {
  requestId: string;
  auth?: AuthContext;
}

export type AppContext = ParameterizedContext<AppState>;

/** The authenticated caller; a route behind `authenticate` can rely on it. */
export function authOf(ctx: AppContext): AuthContext {
  if (!ctx.state.auth) throw new Error('route mounted without authentication');
  return ctx.state.auth;
}
