import type { MessageKey } from './i18n.ts';

export type AdminErrorStatus = 400 | 403 | 404 | 405 | 413;

/** A failure the dashboard answers with an HTML page: its status and the message shown, in the reader's language. */
export class AdminPageError extends Error {
  constructor(
    readonly status: AdminErrorStatus,
    readonly messageKey: MessageKey,
  ) {
    super(`${status} ${messageKey}`);
    this.name = 'AdminPageError';
  }

  static notFound(): AdminPageError {
    return new AdminPageError(404, 'errorNotFound');
  }

  static csrf(): AdminPageError {
    return new AdminPageError(403, 'errorCsrf');
  }
}
