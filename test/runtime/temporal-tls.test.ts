import { execFileSync } from 'node:child_process';
import http2 from 'node:http2';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { checkTemporal, createTemporalClient } from '../../src/temporal/client.ts';
import { temporalConnectionOptions } from '../../src/temporal/connection-options.ts';
import { connectWorker } from '../../src/temporal/worker.ts';

/**
 * A Temporal cluster as production meets it: the dev server behind a TLS front that demands a client certificate
 * signed by its CA (mTLS, as a self-hosted cluster is set up) and, on a second port, an API key (as Temporal Cloud
 * takes one). The front is a real HTTP/2 proxy that forwards gRPC to the dev server; both kinds of connection Wathiq
 * makes (the client's and the worker's native one) go through it with the settings loadConfig reads.
 */

interface Front {
  port: number;
  close(): Promise<void>;
}

const GRPC_UNAUTHENTICATED = 16;

function startFront(
  upstream: string,
  tls: { key: Buffer; cert: Buffer; ca: Buffer },
  requireClientCert: boolean,
  apiKey?: string,
): Promise<Front> {
  const server = http2.createSecureServer({
    ...tls,
    requestCert: requireClientCert,
    rejectUnauthorized: requireClientCert,
    ALPNProtocols: ['h2'],
  });
  const origin = http2.connect(`http://${upstream}`);
  origin.on('error', () => undefined);
  server.on('stream', (stream, headers) => {
    if (apiKey !== undefined && headers.authorization !== `Bearer ${apiKey}`) {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(GRPC_UNAUTHENTICATED),
          'grpc-message': 'bad api key',
        },
        { endStream: true },
      );
      return;
    }
    const forwarded: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (name === ':scheme' || name === ':authority' || name === 'authorization') continue;
      forwarded[name] = value;
    }
    const request = origin.request(forwarded);
    let trailers: http2.OutgoingHttpHeaders = {};
    request.on('response', (responseHeaders) => {
      stream.respond(responseHeaders, { waitForTrailers: true });
    });
    request.on('trailers', (t: http2.IncomingHttpHeaders) => {
      trailers = t;
    });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    request.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('error', () => request.close(http2.constants.NGHTTP2_CANCEL));
    stream.pipe(request);
    request.pipe(stream);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            origin.close();
            server.close(() => done());
          }),
      }),
    );
  });
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made by openssl. */
async function makeCertificates(dir: string): Promise<Record<string, string>> {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Temporal test CA',
  );
  for (const [name, cn, ext] of [
    ['server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:temporal.test\nextendedKeyUsage=serverAuth'],
    ['client', 'wathiq-worker', 'extendedKeyUsage=clientAuth'],
    ['stranger', 'someone-else', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
      '-subj',
      `/CN=${cn}`,
    );
    await writeFile(file(`${name}.ext`), `${ext}\n`);
    // The stranger's certificate is self-signed: a client the cluster's CA never vouched for.
    if (name === 'stranger') {
      openssl(
        'x509',
        '-req',
        '-in',
        file(`${name}.csr`),
        '-signkey',
        file(`${name}.key`),
        '-out',
        file(`${name}.pem`),
        '-days',
        '2',
        '-extfile',
        file(`${name}.ext`),
      );
    } else {
      openssl(
        'x509',
        '-req',
        '-in',
        file(`${name}.csr`),
        '-CA',
        file('ca.pem'),
        '-CAkey',
        file('ca.key'),
        '-CAcreateserial',
        '-out',
        file(`${name}.pem`),
        '-days',
        '2',
        '-extfile',
        file(`${name}.ext`),
      );
    }
  }
  return Object.fromEntries(
    ['ca.pem', 'server.pem', 'server.key', 'client.pem', 'client.key', 'stranger.pem', 'stranger.key'].map(
      (n) => [n, file(n)],
    ),
  );
}

describe('Temporal behind TLS', () => {
  let dir: string;
  let files: Record<string, string>;
  let mtls: Front;
  let keyed: Front;
  const API_KEY = 'wathiq-test-api-key-4c1f';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-temporal-tls-'));
    files = await makeCertificates(dir);
    const tls = {
      key: await readFile(files['server.key']!),
      cert: await readFile(files['server.pem']!),
      ca: await readFile(files['ca.pem']!),
    };
    mtls = await startFront(inject('temporalAddress'), tls, true);
    keyed = await startFront(inject('temporalAddress'), tls, false, API_KEY);
  }, 60_000);

  afterAll(async () => {
    await mtls?.close();
    await keyed?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const settings = (env: Record<string, string>) => {
    const config = loadConfig({ NODE_ENV: 'test', ...env });
    return temporalConnectionOptions({ ...config.temporal, address: config.temporal.address! });
  };

  it('connects the client and the worker with a client certificate (mTLS)', async () => {
    const options = settings({
      TEMPORAL_ADDRESS: `127.0.0.1:${mtls.port}`,
      TEMPORAL_TLS_CA_PATH: files['ca.pem']!,
      TEMPORAL_TLS_CERT_PATH: files['client.pem']!,
      TEMPORAL_TLS_KEY_PATH: files['client.key']!,
    });
    expect(options.tls?.clientCertPair).toBeDefined();
    const temporal = createTemporalClient({ ...options, namespace: 'default' });
    try {
      await checkTemporal(temporal.connection, 10_000);
      const namespace = await temporal.connection.workflowService.describeNamespace({ namespace: 'default' });
      expect(namespace.namespaceInfo?.name).toBe('default');
    } finally {
      await temporal.close();
    }
    const worker = await connectWorker(options);
    await worker.close();
  }, 60_000);

  it('is refused without a client certificate, or with one the CA did not sign', async () => {
    const refused: Record<string, string>[] = [
      { TEMPORAL_TLS_CA_PATH: files['ca.pem']! },
      {
        TEMPORAL_TLS_CA_PATH: files['ca.pem']!,
        TEMPORAL_TLS_CERT_PATH: files['stranger.pem']!,
        TEMPORAL_TLS_KEY_PATH: files['stranger.key']!,
      },
    ];
    for (const env of refused) {
      const options = settings({ TEMPORAL_ADDRESS: `127.0.0.1:${mtls.port}`, ...env });
      await expect(connectWorker(options)).rejects.toThrow();
      const temporal = createTemporalClient({ ...options, namespace: 'default' });
      try {
        await expect(checkTemporal(temporal.connection, 5_000)).rejects.toThrow();
      } finally {
        await temporal.close();
      }
    }
  }, 60_000);

  it('refuses a server certificate from another CA unless TEMPORAL_TLS_CA_PATH names it', async () => {
    const options = settings({ TEMPORAL_ADDRESS: `127.0.0.1:${keyed.port}`, TEMPORAL_API_KEY: API_KEY });
    await expect(connectWorker(options)).rejects.toThrow();
  }, 30_000);

  it('sends the API key over TLS, and a wrong key is refused', async () => {
    const good = settings({
      TEMPORAL_ADDRESS: `127.0.0.1:${keyed.port}`,
      TEMPORAL_TLS_CA_PATH: files['ca.pem']!,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
      TEMPORAL_API_KEY: API_KEY,
    });
    expect(good.tls?.serverNameOverride).toBe('temporal.test');
    const temporal = createTemporalClient({ ...good, namespace: 'default' });
    try {
      await checkTemporal(temporal.connection, 10_000);
    } finally {
      await temporal.close();
    }
    const worker = await connectWorker(good);
    await worker.close();

    const bad = settings({
      TEMPORAL_ADDRESS: `127.0.0.1:${keyed.port}`,
      TEMPORAL_TLS_CA_PATH: files['ca.pem']!,
      TEMPORAL_API_KEY: 'not-the-key',
    });
    await expect(connectWorker(bad)).rejects.toThrow(/api key|unauthenticated/i);
  }, 60_000);

  it('refuses half a client certificate and unreadable files, naming the variables', () => {
    expect(() =>
      loadConfig({
        NODE_ENV: 'test',
        TEMPORAL_ADDRESS: 'x:7233',
        TEMPORAL_TLS_CERT_PATH: files['client.pem']!,
      }),
    ).toThrow(/TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH/);
    expect(() => loadConfig({ NODE_ENV: 'test', TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' })).toThrow(
      /TEMPORAL_TLS: is false, but TEMPORAL_API_KEY/,
    );
    expect(() =>
      settings({ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS_CA_PATH: path.join(dir, 'missing.pem') }),
    ).toThrow(ConfigError);
    expect(() =>
      settings({ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS_CA_PATH: path.join(dir, 'missing.pem') }),
    ).toThrow(/TEMPORAL_TLS_CA_PATH: .*missing\.pem cannot be read \(ENOENT\)/);
    expect(settings({ TEMPORAL_ADDRESS: 'x:7233' })).toEqual({ address: 'x:7233' });
  });
});
