/** Every dashboard URL in one place, so views and routes agree. */
export const ADMIN_PATHS = {
  home: '/admin',
  login: '/admin/login',
  logout: '/admin/logout',
  /** The second step of sign-in, for accounts with two-step sign-in on. */
  loginCode: '/admin/login/code',
  security: '/admin/security',
  totpStart: '/admin/security/totp/start',
  totpConfirm: '/admin/security/totp/confirm',
  totpDisable: '/admin/security/totp/disable',
  keys: '/admin/api',
  createKey: '/admin/api/keys',
  embedOrigins: '/admin/api/embed-origins',
  defaults: '/admin/api/defaults',
  revokeKey: (id: string) => `/admin/api/keys/${encodeURIComponent(id)}/revoke`,
  document: (id: string) => `/admin/documents/${encodeURIComponent(id)}`,
  templates: '/admin/templates',
  bulkSendNew: (templateId: string) => `/admin/templates/${encodeURIComponent(templateId)}/bulk-send`,
  bulkSend: (id: string) => `/admin/bulk-sends/${encodeURIComponent(id)}`,
  bulkSendProgress: (id: string) => `/admin/bulk-sends/${encodeURIComponent(id)}/progress`,
  bulkSendResults: (id: string) => `/admin/bulk-sends/${encodeURIComponent(id)}/results.csv`,
  bulkSendCancel: (id: string) => `/admin/bulk-sends/${encodeURIComponent(id)}/cancel`,
  asset: (name: string, version: string) => `/admin/assets/${name}?v=${version}`,
} as const;

export function isAdminPath(path: string): boolean {
  return path === '/admin' || path.startsWith('/admin/');
}

/** Flash messages are codes in the query string, mapped to fixed texts: nothing a link can inject. */
export const FLASH_CODES = [
  'signed_out',
  'expired',
  'revoked',
  'already_revoked',
  'embed_saved',
  'defaults_saved',
  'code_expired',
  'second_factor_off',
] as const;
export type FlashCode = (typeof FLASH_CODES)[number];

/** Where to go after signing in: only a dashboard page of this site (no open redirect). */
export function safeNext(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 512) return undefined;
  if (!/^\/admin(?:[/?][\x21-\x7e]*)?$/.test(value)) return undefined;
  if (value.startsWith('//') || value.includes('\\')) return undefined;
  // No dot segments, raw or encoded: the target must be the dashboard page it names.
  if (/\/\.\.?(?:[/?]|$)/.test(value) || /%2e|%2f|%5c/i.test(value)) return undefined;
  const path = value.split('?')[0];
  if (path === ADMIN_PATHS.login || path === ADMIN_PATHS.logout || path === ADMIN_PATHS.loginCode)
    return undefined;
  return value;
}

export function loginUrl(
  options: { next?: string | undefined; message?: FlashCode | undefined } = {},
): string {
  const params = new URLSearchParams();
  const next = safeNext(options.next);
  if (next && next !== ADMIN_PATHS.home) params.set('next', next);
  if (options.message) params.set('m', options.message);
  const query = params.toString();
  return query ? `${ADMIN_PATHS.login}?${query}` : ADMIN_PATHS.login;
}
