import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type TestPki, certDer } from './pki.ts';

/** Debian's SoftHSM2 PKCS#11 module (package softhsm2). */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface SoftHsmToken {
  /** The SOFTHSM2_CONF file: its token directory is under `dir`. */
  conf: string;
  label: string;
  pin: string;
  keyLabel: string;
}

/**
 * A SoftHSM2 token in a directory of its own, holding the test PKI's signing key and certificate (CKA_ID 01,
 * label "signing") and its CA's certificate (CKA_ID 02), imported with OpenSC's pkcs11-tool as an operator would.
 * The module reads SOFTHSM2_CONF when it is initialised, so the caller sets it before the first signer loads.
 */
export async function createSoftHsmToken(dir: string, pki: TestPki): Promise<SoftHsmToken> {
  const tokens = path.join(dir, 'tokens');
  await mkdir(tokens, { recursive: true });
  const conf = path.join(dir, 'softhsm2.conf');
  await writeFile(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const token: SoftHsmToken = { conf, label: 'wathiq-test', pin: '246810', keyLabel: 'signing' };
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  execFileSync(
    'softhsm2-util',
    ['--init-token', '--free', '--label', token.label, '--pin', token.pin, '--so-pin', '13579'],
    { env, stdio: 'pipe' },
  );
  const files = {
    key: path.join(dir, 'key.der'),
    leaf: path.join(dir, 'leaf.der'),
    ca: path.join(dir, 'ca.der'),
  };
  await writeFile(files.key, createPrivateKey(pki.leaf.keyPem).export({ type: 'pkcs8', format: 'der' }));
  await writeFile(files.leaf, certDer(pki.leaf));
  await writeFile(files.ca, certDer(pki.ca));
  const put = (file: string, type: string, id: string, label: string) =>
    execFileSync(
      'pkcs11-tool',
      [
        ...['--module', SOFTHSM_MODULE, '--token-label', token.label, '--login', '--pin', token.pin],
        ...['--write-object', file, '--type', type, '--id', id, '--label', label],
      ],
      { env, stdio: 'pipe' },
    );
  put(files.key, 'privkey', '01', token.keyLabel);
  put(files.leaf, 'cert', '01', token.keyLabel);
  put(files.ca, 'cert', '02', 'ca');
  return token;
}
