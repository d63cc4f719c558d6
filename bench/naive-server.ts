/**
 * The naive baseline the document reads are measured against, by bench:api and bench:lifecycle alike: what the
 * same answers cost with nothing but Koa and `pg`.
 */
import { createHash } from 'node:crypto';
import Koa from 'koa';
import pg from 'pg';

export interface NaiveServer {
  /** Its origin: GET {url}/documents/{id} and GET {url}/documents?per_page=N. */
  url: string;
  close(): Promise<void>;
}

const DOCUMENT_PATH = /^\/documents\/([0-9a-f-]{36})$/;

/**
 * The naive baseline: a bare Koa app with `pg` used directly, doing only what the same answer needs. Each request
 * finds its key by the key (joined to the account, as authentication needs the plan), compares the secret's
 * SHA-256, then reads:
 *   - GET /documents/{id}: the document with its approvers as JSON, in one query;
 *   - GET /documents?per_page=N: the page (newest first) with each document's approvers as JSON, and the count of
 *     the account's documents for the page's `total`.
 * Rows go out as PostgreSQL returns them, with no validation, logging, metrics or renaming.
 */
export async function startNaiveServer(databaseUrl: string, poolMax: number): Promise<NaiveServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax });
  const authenticated = async (authorization: string | undefined) => {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1] ?? '';
    const colon = token.indexOf(':');
    const { rows } = await pool.query<{ account_id: string; secret_hash: string; revoked_at: Date | null }>(
      'SELECT k.account_id, k.secret_hash, k.revoked_at, a.plan FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key = $1',
      [token.slice(0, colon)],
    );
    const key = rows[0];
    const hash = createHash('sha256')
      .update(token.slice(colon + 1))
      .digest('hex');
    return key && !key.revoked_at && key.secret_hash === hash ? key.account_id : undefined;
  };
  const approversJson = `coalesce((SELECT json_agg(a ORDER BY a.order_index) FROM approvers a WHERE a.document_id = d.id), '[]') AS approvers`;
  const app = new Koa();
  app.use(async (ctx) => {
    const accountId = await authenticated(ctx.get('authorization'));
    if (!accountId) {
      ctx.status = 401;
      return;
    }
    const id = DOCUMENT_PATH.exec(ctx.path)?.[1];
    if (id) {
      const { rows } = await pool.query<Record<string, unknown>>(
        `SELECT d.*, ${approversJson} FROM documents d WHERE d.id = $1 AND d.account_id = $2`,
        [id, accountId],
      );
      if (rows.length === 0) ctx.status = 404;
      else ctx.body = { success: true, data: rows[0] };
    } else if (ctx.path === '/documents') {
      const perPage = Number(ctx.query.per_page ?? 15);
      const [page, count] = await Promise.all([
        pool.query(
          `SELECT d.*, ${approversJson} FROM documents d WHERE d.account_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
          [accountId, perPage],
        ),
        pool.query<{ n: string }>('SELECT count(*) AS n FROM documents WHERE account_id = $1', [accountId]),
      ]);
      ctx.body = {
        success: true,
        data: page.rows,
        meta: { per_page: perPage, total: Number(count.rows[0]!.n) },
      };
    } else ctx.status = 404;
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await pool.end();
    },
  };
}
