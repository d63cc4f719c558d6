import { type KeyObject, constants, privateEncrypt, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A remote signing service speaking the Cloud Signature Consortium API v2 (info, oauth2/token with the
 * client-credentials grant, credentials/list, credentials/info, credentials/authorize, signatures/signHash) on
 * 127.0.0.1, holding one RSA key. It checks what a real service checks: the bearer token, the credential's PIN
 * (authMode explicit), that the SAD was issued for exactly the hashes being signed, and that each hash is a SHA-256
 * digest. Every request's raw body is kept, so a test can prove that no document bytes were sent.
 */
export interface FakeCscOptions {
  key: KeyObject;
  /** DER: the signing certificate first, then its chain. */
  certificates: Buffer[];
  clientId: string;
  clientSecret: string;
  pin: string;
  credentialId?: string;
  /** What /info names as `oauth2`: the fake's own origin unless given; null leaves it out. */
  oauth2?: string | null;
}

export interface CscRequest {
  path: string;
  authorization: string | undefined;
  rawBody: Buffer;
  status: number;
}

export interface FakeCsc {
  /** The API base, `{origin}/csc/v2`. */
  url: string;
  requests: CscRequest[];
  /** The next `count` calls of `method` (e.g. 'signatures/signHash') answer 500. */
  failNext(method: string, count: number): void;
  close(): Promise<void>;
}

const SHA256 = '2.16.840.1.101.3.4.2.1';
const DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

export async function startFakeCsc(options: FakeCscOptions): Promise<FakeCsc> {
  const credentialId = options.credentialId ?? `cred-${randomBytes(4).toString('hex')}`;
  const tokens = new Set<string>();
  const sads = new Map<string, string[]>();
  const failures = new Map<string, number>();
  const requests: CscRequest[] = [];
  let origin = '';

  const handle = (path: string, auth: string | undefined, body: Record<string, unknown>) => {
    const refuse = (status: number, error: string, description: string) => ({
      status,
      json: { error, error_description: description },
    });
    if (path === '/csc/v2/info') {
      return {
        status: 200,
        json: {
          specs: '2.0.0.2',
          name: 'Wathiq test CSC',
          lang: 'en-US',
          authType: ['oauth2client'],
          ...(options.oauth2 !== null && { oauth2: options.oauth2 ?? origin }),
          methods: ['credentials/list', 'credentials/info', 'credentials/authorize', 'signatures/signHash'],
        },
      };
    }
    if (path === '/oauth2/token') {
      if (body.grant_type !== 'client_credentials') return refuse(400, 'unsupported_grant_type', '');
      if (body.client_id !== options.clientId || body.client_secret !== options.clientSecret)
        return refuse(401, 'invalid_client', 'unknown client');
      const token = randomBytes(16).toString('hex');
      tokens.add(token);
      return { status: 200, json: { access_token: token, token_type: 'Bearer', expires_in: 3600 } };
    }
    if (!auth?.startsWith('Bearer ') || !tokens.has(auth.slice(7)))
      return refuse(401, 'invalid_token', 'no valid bearer token');
    const method = path.replace(/^\/csc\/v2\//, '');
    const failing = failures.get(method) ?? 0;
    if (failing > 0) {
      failures.set(method, failing - 1);
      return refuse(500, 'server_error', 'scripted failure');
    }
    const hashesOf = (): string[] | undefined => {
      const h = body.hashes;
      if (!Array.isArray(h) || !h.every((x) => typeof x === 'string')) return undefined;
      return h.every((x) => Buffer.from(x, 'base64').length === 32) ? h : undefined;
    };
    if (method !== 'credentials/list' && body.credentialID !== credentialId)
      return refuse(400, 'invalid_request', 'unknown credentialID');
    switch (method) {
      case 'credentials/list':
        return { status: 200, json: { credentialIDs: [credentialId] } };
      case 'credentials/info':
        return {
          status: 200,
          json: {
            key: { status: 'enabled', algo: ['1.2.840.113549.1.1.11', '1.2.840.113549.1.1.1'], len: 2048 },
            cert: {
              status: 'valid',
              certificates: (body.certificates === 'chain'
                ? options.certificates
                : options.certificates.slice(0, 1)
              ).map((c) => c.toString('base64')),
            },
            authMode: 'explicit',
            PIN: { presence: 'true', format: 'N', label: 'PIN' },
            multisign: 1,
          },
        };
      case 'credentials/authorize': {
        const hashes = hashesOf();
        if (!hashes || body.hashAlgorithmOID !== SHA256 || body.numSignatures !== hashes.length)
          return refuse(400, 'invalid_request', 'hashes must be SHA-256 digests, one per signature');
        if (body.PIN !== options.pin) return refuse(400, 'invalid_pin', 'wrong PIN');
        const sad = randomBytes(16).toString('hex');
        sads.set(sad, hashes);
        return { status: 200, json: { SAD: sad, expiresIn: 300 } };
      }
      case 'signatures/signHash': {
        const hashes = hashesOf();
        const sad = typeof body.SAD === 'string' ? sads.get(body.SAD) : undefined;
        if (!hashes || !sad || sad.join() !== hashes.join())
          return refuse(400, 'invalid_request', 'SAD not issued for these hashes');
        if (body.signAlgo !== '1.2.840.113549.1.1.11' && body.signAlgo !== '1.2.840.113549.1.1.1')
          return refuse(400, 'invalid_request', 'unsupported signAlgo');
        sads.delete(body.SAD as string);
        const signatures = hashes.map((h) =>
          privateEncrypt(
            { key: options.key, padding: constants.RSA_PKCS1_PADDING },
            Buffer.concat([DIGEST_INFO, Buffer.from(h, 'base64')]),
          ).toString('base64'),
        );
        return { status: 200, json: { signatures } };
      }
      default:
        return refuse(404, 'invalid_request', 'unknown method');
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const path = (req.url ?? '').split('?')[0]!;
      let body: Record<string, unknown> = {};
      try {
        const text = rawBody.toString('utf8');
        body = req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')
          ? Object.fromEntries(new URLSearchParams(text))
          : text
            ? (JSON.parse(text) as Record<string, unknown>)
            : {};
      } catch {
        body = {};
      }
      const { status, json } =
        req.method === 'POST'
          ? handle(path, req.headers.authorization, body)
          : { status: 405, json: { error: 'invalid_request' } };
      requests.push({ path, authorization: req.headers.authorization, rawBody, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/csc/v2`,
    requests,
    failNext(method, count) {
      failures.set(method, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
