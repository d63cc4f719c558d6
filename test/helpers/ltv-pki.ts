import { execFile as execFileCb, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const execFile = promisify(execFileCb);

/**
 * A complete test PKI played by OpenSSL, served over HTTP on 127.0.0.1, for long-term validation (PAdES B-LT and
 * B-LTA): a root CA, an intermediate CA, a document-signing certificate naming an OCSP responder (AIA) and a CRL
 * distribution point, a second signing certificate to revoke, and a time-stamping certificate (extendedKeyUsage
 * critical timeStamping) naming only a CRL distribution point.
 *
 * The server answers OCSP requests with `openssl ocsp` (signed by the intermediate CA, from its live index),
 * CRLs with `openssl ca -gencrl` (generated per request, so a revocation shows at once), the CA certificates
 * (AIA caIssuers), and RFC 3161 requests with `openssl ts -reply`.
 */
export interface LtvPki {
  dir: string;
  baseUrl: string;
  tsaUrl: string;
  /** PEM files. */
  rootPem: string;
  intermediatePem: string;
  tsaPem: string;
  /** PKCS#12 of a signing certificate (with the intermediate), and of another one for revoking. */
  signerP12: string;
  otherSignerP12: string;
  p12Password: string;
  /** NSS database trusting the root (for `pdfsig -nssdir`). */
  nssDir: string;
  /** Requests served, by kind. */
  requests: { ocsp: number; crl: number; tsa: number; cert: number };
  /**
   * Takes the OCSP responder, the CRL distribution points and the caIssuers URLs down (503) or back up; the TSA
   * keeps answering. A validator that still says valid while they are down used only what the file carries.
   */
  setOffline(offline: boolean): void;
  /** Revokes the second signing certificate (or the first) in the intermediate CA's database: OCSP and CRL say so. */
  revoke(which: 'signer' | 'otherSigner'): Promise<void>;
  /**
   * Replaces the time-stamping certificate by a new one valid from `notBefore` to `notAfter` (item 5's short-lived
   * TSA certificates); the TSA signs with it from then on.
   */
  renewTsaCertificate(notBefore: Date, notAfter: Date): Promise<void>;
  close(): Promise<void>;
}

const asn1Time = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

function caConfig(dir: string, name: string): string {
  return `[ ca ]
default_ca = ca_default
[ ca_default ]
dir = ${dir}
database = ${dir}/index.txt
new_certs_dir = ${dir}/issued
certificate = ${dir}/${name}.pem
private_key = ${dir}/${name}.key
crlnumber = ${dir}/crlnumber
rand_serial = yes
unique_subject = no
default_md = sha256
default_days = 365
default_crl_days = 7
policy = policy_any
email_in_dn = no
copy_extensions = none
[ policy_any ]
commonName = supplied
organizationName = optional
`;
}

/** Starts the PKI's HTTP server and issues its certificates (about a second of OpenSSL work). */
export async function startLtvPki(dir: string): Promise<LtvPki> {
  await rm(dir, { recursive: true, force: true });
  const f = (...p: string[]) => path.join(dir, ...p);
  const requests = { ocsp: 0, crl: 0, tsa: 0, cert: 0 };
  const ssl = async (args: string[]) => {
    await execFile('openssl', args, { cwd: dir });
  };
  // `openssl ca` rewrites a CA's crlnumber and index (write a .new file, rename it over): two at once on the same
  // CA fail ("Unable to rename .../crlnumber.new"), and a validator fetching two CRLs side by side would be told
  // 404, read as "no revocation information". One command at a time per CA.
  const caQueues = new Map<string, Promise<unknown>>();
  const onCa = <T>(ca: string, run: () => Promise<T>): Promise<T> => {
    const next = (caQueues.get(ca) ?? Promise.resolve()).then(run, run);
    caQueues.set(
      ca,
      next.catch(() => undefined),
    );
    return next;
  };

  // The server first: the certificates name its port.
  let handler: (req: http.IncomingMessage, body: Buffer) => Promise<{ type: string; body: Buffer }> = () =>
    Promise.reject(new Error('not ready'));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handler(req, Buffer.concat(chunks)).then(
        (r) => res.writeHead(200, { 'content-type': r.type }).end(r.body),
        (err: unknown) => res.writeHead(String(err).includes('offline') ? 503 : 404).end(String(err)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  for (const ca of ['root', 'int']) {
    await mkdir(f(ca, 'issued'), { recursive: true });
    await writeFile(f(ca, 'index.txt'), '');
    await writeFile(f(ca, 'crlnumber'), '1000\n');
    await writeFile(f(ca, 'ca.cnf'), caConfig(f(ca), ca));
  }
  await writeFile(
    f('ext.cnf'),
    `[ root ]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[ int ]
basicConstraints = critical,CA:true,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
crlDistributionPoints = URI:${baseUrl}/crl/root.crl
authorityInfoAccess = caIssuers;URI:${baseUrl}/certs/root.cer
[ signer ]
basicConstraints = CA:false
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:${baseUrl}/ocsp,caIssuers;URI:${baseUrl}/certs/int.cer
crlDistributionPoints = URI:${baseUrl}/crl/int.crl
[ tsa ]
basicConstraints = CA:false
keyUsage = critical,digitalSignature,nonRepudiation
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = caIssuers;URI:${baseUrl}/certs/int.cer
crlDistributionPoints = URI:${baseUrl}/crl/int.crl
`,
  );
  const now = Date.now();
  const day = 24 * 3600_000;
  const subj = (cn: string) => `/CN=${cn}/O=Wathiq tests`;
  // The root signs itself through `openssl ca -selfsign` so it has an index entry like the others.
  await ssl([
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('root', 'root.key'),
    '-subj',
    subj('Wathiq LTV Test Root CA'),
    '-out',
    f('root', 'root.csr'),
  ]);
  await ssl([
    'ca',
    '-batch',
    '-notext',
    '-selfsign',
    '-config',
    f('root', 'ca.cnf'),
    '-keyfile',
    f('root', 'root.key'),
    '-in',
    f('root', 'root.csr'),
    '-out',
    f('root', 'root.pem'),
    '-extfile',
    f('ext.cnf'),
    '-extensions',
    'root',
    '-startdate',
    asn1Time(new Date(now - 2 * day)),
    '-enddate',
    asn1Time(new Date(now + 3650 * day)),
  ]);

  const issue = async (
    ca: 'root' | 'int',
    name: string,
    cn: string,
    ext: string,
    notBefore = new Date(now - day),
    notAfter = new Date(now + 730 * day),
  ) => {
    const folder = ca === 'root' ? 'root' : 'int';
    const at = name === 'int' ? f('int', 'int') : f(name);
    await ssl([
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${at}.key`,
      '-subj',
      subj(cn),
      '-out',
      `${at}.csr`,
    ]);
    await onCa(folder, () =>
      ssl([
        'ca',
        '-batch',
        '-notext',
        '-config',
        f(folder, 'ca.cnf'),
        '-in',
        `${at}.csr`,
        '-out',
        `${at}.pem`,
        '-extfile',
        f('ext.cnf'),
        '-extensions',
        ext,
        '-startdate',
        asn1Time(notBefore),
        '-enddate',
        asn1Time(notAfter),
      ]),
    );
    return `${at}.pem`;
  };
  await issue('root', 'int', 'Wathiq LTV Test Intermediate CA', 'int');
  await issue('int', 'signer', 'Wathiq LTV Test Document Signing', 'signer');
  await issue('int', 'other-signer', 'Wathiq LTV Test Document Signing (to revoke)', 'signer');
  await issue('int', 'tsa', 'Wathiq LTV Test Time-Stamping Authority', 'tsa');
  await writeFile(
    f('chain.pem'),
    (await readFile(f('int', 'int.pem'), 'utf8')) + (await readFile(f('root', 'root.pem'), 'utf8')),
  );
  const p12Password = 'ltv-test-password';
  for (const name of ['signer', 'other-signer']) {
    await ssl([
      'pkcs12',
      '-export',
      '-inkey',
      f(`${name}.key`),
      '-in',
      f(`${name}.pem`),
      '-certfile',
      f('int', 'int.pem'),
      '-passout',
      `pass:${p12Password}`,
      '-out',
      f(`${name}.p12`),
    ]);
  }
  await writeFile(f('tsa-serial'), '01\n');
  await writeFile(
    f('tsa.cnf'),
    `[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = ${f('tsa-serial')}
default_policy = 1.3.6.1.4.1.55555.1.2
digests = sha256, sha384, sha512
signer_digest = sha256
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`,
  );
  const nssDir = f('nss');
  await mkdir(nssDir, { recursive: true });
  execFileSync('certutil', ['-N', '-d', `sql:${nssDir}`, '--empty-password']);
  execFileSync('certutil', [
    '-A',
    '-d',
    `sql:${nssDir}`,
    '-n',
    'wathiq-ltv-root',
    '-t',
    'CT,C,C',
    '-i',
    f('root', 'root.pem'),
  ]);

  const scratch = async <T>(run: (p: (n: string) => string) => Promise<T>): Promise<T> => {
    const folder = f('scratch', randomUUID());
    await mkdir(folder, { recursive: true });
    try {
      return await run((n) => path.join(folder, n));
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  };
  const der = async (pem: string) => {
    const { stdout } = await execFile('openssl', ['x509', '-in', pem, '-outform', 'DER'], {
      encoding: 'buffer',
    });
    return stdout;
  };

  let offline = false;
  handler = async (req, body) => {
    const url = req.url ?? '';
    if (offline && url !== '/tsa') throw new Error('offline');
    if (req.method === 'POST' && url === '/ocsp') {
      requests.ocsp += 1;
      return scratch(async (p) => {
        await writeFile(p('req.der'), body);
        await ssl([
          'ocsp',
          '-index',
          f('int', 'index.txt'),
          '-rsigner',
          f('int', 'int.pem'),
          '-rkey',
          f('int', 'int.key'),
          '-CA',
          f('int', 'int.pem'),
          '-reqin',
          p('req.der'),
          '-respout',
          p('resp.der'),
          '-ndays',
          '1',
        ]);
        return { type: 'application/ocsp-response', body: await readFile(p('resp.der')) };
      });
    }
    const crl = /^\/crl\/(root|int)\.crl$/.exec(url);
    if (req.method === 'GET' && crl) {
      requests.crl += 1;
      const ca = crl[1]!;
      return scratch(async (p) => {
        await onCa(ca, () =>
          ssl(['ca', '-batch', '-gencrl', '-config', f(ca, 'ca.cnf'), '-out', p('crl.pem')]),
        );
        await ssl(['crl', '-in', p('crl.pem'), '-outform', 'DER', '-out', p('crl.der')]);
        return { type: 'application/pkix-crl', body: await readFile(p('crl.der')) };
      });
    }
    const cert = /^\/certs\/(root|int)\.cer$/.exec(url);
    if (req.method === 'GET' && cert) {
      requests.cert += 1;
      return { type: 'application/pkix-cert', body: await der(f(cert[1]!, `${cert[1]!}.pem`)) };
    }
    if (req.method === 'POST' && url === '/tsa') {
      requests.tsa += 1;
      return scratch(async (p) => {
        await writeFile(p('query.tsq'), body);
        await ssl([
          'ts',
          '-reply',
          '-config',
          f('tsa.cnf'),
          '-queryfile',
          p('query.tsq'),
          '-inkey',
          f('tsa.key'),
          '-signer',
          f('tsa.pem'),
          '-chain',
          f('chain.pem'),
          '-out',
          p('reply.tsr'),
        ]);
        return { type: 'application/timestamp-reply', body: await readFile(p('reply.tsr')) };
      });
    }
    throw new Error(`no route ${req.method} ${url}`);
  };

  return {
    dir,
    baseUrl,
    tsaUrl: `${baseUrl}/tsa`,
    rootPem: f('root', 'root.pem'),
    intermediatePem: f('int', 'int.pem'),
    tsaPem: f('tsa.pem'),
    signerP12: f('signer.p12'),
    otherSignerP12: f('other-signer.p12'),
    p12Password,
    nssDir,
    requests,
    setOffline(value) {
      offline = value;
    },
    async revoke(which) {
      const pem = which === 'signer' ? f('signer.pem') : f('other-signer.pem');
      await onCa('int', () =>
        ssl(['ca', '-batch', '-config', f('int', 'ca.cnf'), '-revoke', pem, '-crl_reason', 'keyCompromise']),
      );
    },
    async renewTsaCertificate(notBefore, notAfter) {
      await issue('int', 'tsa', 'Wathiq LTV Test Time-Stamping Authority', 'tsa', notBefore, notAfter);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
