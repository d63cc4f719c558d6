import { request } from 'undici';
import { z } from 'zod';
import type { CscSignerOptions } from '../../config/signing-options.ts';
import { SignerConfigError } from './signer-interface.ts';

/** A CSC answer is at most this large (a certificate chain is a few kilobytes). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** The service failed or did not answer, after every retry: retryable, like any outage. */
export class CscUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CscUnavailableError';
  }
}

class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const InfoResponse = z.looseObject({
  name: z.string().optional(),
  oauth2: z.string().optional(),
  methods: z.array(z.string()).optional(),
});
const TokenResponse = z.looseObject({ access_token: z.string().min(1), expires_in: z.number().optional() });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Where the client secret is posted: SIGNING_CSC_OAUTH_TOKEN_URL as configured; otherwise `{oauth2}/oauth2/token`
 * with the `oauth2` /info names, but only when that is https on the service's own origin, so that an answer of the
 * service (or of whoever stands in for it) cannot send the secret to another host or over plain http; without
 * `oauth2`, the service's origin.
 */
export function tokenUrl(base: string, oauth2: string | undefined, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const origin = new URL(base).origin;
  if (oauth2 === undefined) return `${origin}/oauth2/token`;
  let named: URL | undefined;
  try {
    named = new URL(oauth2);
  } catch {
    named = undefined;
  }
  if (named?.protocol !== 'https:' || named.origin !== origin) {
    throw new SignerConfigError(
      `CSC signing service: /info names ${JSON.stringify(named?.origin ?? oauth2.slice(0, 100))} for OAuth 2.0, which is not https on the service's origin ${origin}; the client secret is not sent there. Set SIGNING_CSC_OAUTH_TOKEN_URL to the token endpoint to use another.`,
    );
  }
  return `${oauth2.replace(/\/+$/, '')}/oauth2/token`;
}

type Options = Pick<
  CscSignerOptions,
  | 'baseUrl'
  | 'token'
  | 'clientId'
  | 'clientSecret'
  | 'oauthTokenUrl'
  | 'timeoutMs'
  | 'retries'
  | 'retryBackoffMs'
>;

/** An authenticated call of the CSC API: `method` is its path (`credentials/info`, …), `body` its JSON. */
export type CscCall = <T>(method: string, schema: z.ZodType<T>, body: object) => Promise<T>;

/**
 * Opens the service: reads /info (which must offer signatures/signHash) and returns the authenticated call. A
 * 401 on a token we obtained ourselves gets one fresh token.
 */
export async function openCscApi(opts: Options): Promise<CscCall> {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const info = await call(opts, 'info', InfoResponse, () =>
    post(opts, `${base}/info`, JSON.stringify({ lang: 'en-US' }), 'application/json'),
  );
  if (info.methods && !info.methods.includes('signatures/signHash')) {
    throw new SignerConfigError('CSC signing service does not offer signatures/signHash.');
  }
  const bearer = bearerTokens(opts, base, info.oauth2);
  return async <T>(method: string, schema: z.ZodType<T>, body: object): Promise<T> => {
    let renewed = false;
    for (;;) {
      try {
        return await call(opts, method, schema, async () =>
          post(opts, `${base}/${method}`, JSON.stringify(body), 'application/json', await bearer.current()),
        );
      } catch (err) {
        const expired = err instanceof SignerConfigError && / HTTP 401\b/.test(err.message);
        if (!expired || renewed || opts.token) throw err;
        renewed = true;
        bearer.forget();
      }
    }
  };
}

/**
 * The bearer token: SIGNING_CSC_TOKEN, or one obtained with the client-credentials grant and kept until ten
 * seconds before it expires. The token endpoint is worked out only when a token is needed.
 */
function bearerTokens(
  opts: Options,
  base: string,
  oauth2: string | undefined,
): { current: () => Promise<string>; forget: () => void } {
  let accessToken: { value: string; expiresAt: number } | undefined = opts.token
    ? { value: opts.token, expiresAt: Number.POSITIVE_INFINITY }
    : undefined;
  const current = async (): Promise<string> => {
    if (accessToken && accessToken.expiresAt > Date.now() + 10_000) return accessToken.value;
    if (!opts.clientId || opts.clientSecret === undefined) {
      throw new SignerConfigError(
        'SIGNER=csc needs SIGNING_CSC_TOKEN, or SIGNING_CSC_CLIENT_ID and SIGNING_CSC_CLIENT_SECRET.',
      );
    }
    const url = tokenUrl(base, oauth2, opts.oauthTokenUrl);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: opts.clientId,
      client_secret: opts.clientSecret,
    }).toString();
    const token = await call(opts, 'oauth2/token', TokenResponse, () =>
      post(opts, url, form, 'application/x-www-form-urlencoded'),
    );
    accessToken = {
      value: token.access_token,
      expiresAt: Date.now() + (token.expires_in ?? 3600) * 1000,
    };
    return accessToken.value;
  };
  return {
    current,
    forget: () => {
      accessToken = undefined;
    },
  };
}

/** A call with retries of what may pass (5xx, time-outs, connection failures); 4xx is a refusal. */
async function call<T>(
  opts: Options,
  name: string,
  schema: z.ZodType<T>,
  attempt: () => Promise<unknown>,
): Promise<T> {
  let last = '';
  for (let i = 0; i <= opts.retries; i++) {
    if (i > 0) await sleep(opts.retryBackoffMs * 2 ** (i - 1));
    try {
      const parsed = schema.safeParse(await attempt());
      if (!parsed.success)
        throw new SignerConfigError(`CSC signing service: ${name} answered an unexpected shape.`);
      return parsed.data;
    } catch (err) {
      if (err instanceof SignerConfigError) throw err;
      if (err instanceof HttpStatusError && err.status < 500) {
        throw new SignerConfigError(`CSC signing service refused ${name}: ${err.message}`);
      }
      last = (err as Error).message;
    }
  }
  throw new CscUnavailableError(
    `CSC signing service failed ${name} ${opts.retries + 1} times; last: ${last}`,
  );
}

/** One POST with JSON (or a form), within the time limit; the body read up to MAX_RESPONSE_BYTES. */
async function post(
  opts: Options,
  url: string,
  body: string,
  contentType: string,
  bearer?: string,
): Promise<unknown> {
  const res = await request(url, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      accept: 'application/json',
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    },
    body,
    signal: AbortSignal.timeout(opts.timeoutMs),
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      res.body.destroy();
      throw new HttpStatusError(502, `answer larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (res.statusCode >= 400) {
    const err = json as { error?: unknown; error_description?: unknown } | undefined;
    const why = [err?.error, err?.error_description].filter((v) => typeof v === 'string').join(': ');
    throw new HttpStatusError(res.statusCode, `HTTP ${res.statusCode}${why ? ` ${why.slice(0, 300)}` : ''}`);
  }
  if (json === undefined) throw new HttpStatusError(502, 'answer is not JSON');
  return json;
}
