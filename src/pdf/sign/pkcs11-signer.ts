import { X509Certificate, createHash, verify as cryptoVerify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type * as Pkcs11Types from 'pkcs11js';
import { digestInfoSha256, ecdsaRawToDer } from './signature-encoding.ts';
import type { Pkcs11SignerOptions } from '../../config/signing-options.ts';
import { type Signer, SignerConfigError, certificateKeyType, orderChain } from './signer-interface.ts';

export type { Pkcs11SignerOptions } from '../../config/signing-options.ts';

type Pkcs11Module = typeof Pkcs11Types;

/** CKS_RO_USER_FUNCTIONS and CKS_RW_USER_FUNCTIONS: a session of a logged-in application. */
const USER_STATES = new Set([1, 3]);
type Handle = Pkcs11Types.Handle;

let pkcs11js: Pkcs11Module | undefined;
const loadBinding = (): Pkcs11Module => {
  pkcs11js ??= createRequire(import.meta.url)('pkcs11js') as Pkcs11Module;
  return pkcs11js;
};

/** One initialised module per library path, for the process's life. */
const modules = new Map<string, Pkcs11Types.PKCS11>();

function moduleFor(modulePath: string): Pkcs11Types.PKCS11 {
  const existing = modules.get(modulePath);
  if (existing) return existing;
  const p = loadBinding();
  const lib = new p.PKCS11();
  try {
    lib.load(modulePath);
  } catch (err) {
    throw new SignerConfigError(
      `SIGNING_PKCS11_MODULE ${modulePath} cannot be loaded: ${(err as Error).message}`,
    );
  }
  try {
    lib.C_Initialize({ flags: p.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (codeOf(err) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') {
      throw new SignerConfigError(`PKCS#11 module ${modulePath} did not initialise: ${describe(err)}`);
    }
  }
  modules.set(modulePath, lib);
  return lib;
}

/** The CKR_ name of a pkcs11js error, when it is one. */
function codeOf(err: unknown): string | undefined {
  const m = /(CKR_[A-Z_]+)/.exec(String((err as Error | undefined)?.message ?? ''));
  return m?.[1];
}

const CAUSES: Record<string, string> = {
  CKR_PIN_INCORRECT: 'the PIN is wrong',
  CKR_PIN_LOCKED: 'the token is locked (too many wrong PINs); its security officer must unlock it',
  CKR_PIN_EXPIRED: 'the PIN has expired',
  CKR_TOKEN_NOT_PRESENT: 'the token is not present',
  CKR_DEVICE_REMOVED: 'the token was removed',
  CKR_DEVICE_ERROR: 'the device failed',
  CKR_SLOT_ID_INVALID: 'there is no such slot',
};

function describe(err: unknown): string {
  const code = codeOf(err);
  if (code && CAUSES[code]) return `${CAUSES[code]} (${code})`;
  return code ?? (err as Error).message;
}

/**
 * PINs a token refused, by module and token: never offered again (each wrong try counts towards the token's
 * lock-out), until the configured PIN changes (a new SIGNING_PKCS11_PIN_FILE content, or a restart).
 */
const refusedPins = new Map<string, string>();

async function readPin(opts: Pkcs11SignerOptions): Promise<string> {
  if (opts.pinFile) {
    try {
      return (await readFile(opts.pinFile, 'utf8')).replace(/\r?\n$/, '');
    } catch (err) {
      throw new SignerConfigError(
        `SIGNING_PKCS11_PIN_FILE ${opts.pinFile} cannot be read: ${(err as Error).message}`,
      );
    }
  }
  if (opts.pin === undefined)
    throw new SignerConfigError('SIGNER=pkcs11 needs SIGNING_PKCS11_PIN or SIGNING_PKCS11_PIN_FILE.');
  return opts.pin;
}

function findSlot(lib: Pkcs11Types.PKCS11, opts: Pkcs11SignerOptions): Handle {
  let slots: Handle[];
  try {
    slots = lib.C_GetSlotList(true);
  } catch (err) {
    throw new SignerConfigError(`PKCS#11 module lists no slots: ${describe(err)}`);
  }
  if (opts.slot !== undefined) {
    const slot = slots.find((s) => s.readUIntLE(0, Math.min(6, s.length)) === opts.slot);
    if (!slot)
      throw new SignerConfigError(
        `SIGNING_PKCS11_SLOT: no token in slot ${opts.slot} of the PKCS#11 module.`,
      );
    return slot;
  }
  if (opts.tokenLabel !== undefined) {
    const slot = slots.find((s) => lib.C_GetTokenInfo(s).label.trim() === opts.tokenLabel);
    if (!slot)
      throw new SignerConfigError(
        `SIGNING_PKCS11_TOKEN_LABEL: no token labelled "${opts.tokenLabel}" is present (the token is missing?).`,
      );
    return slot;
  }
  if (slots.length !== 1) {
    throw new SignerConfigError(
      `The PKCS#11 module has ${slots.length} tokens present; name one with SIGNING_PKCS11_TOKEN_LABEL or SIGNING_PKCS11_SLOT.`,
    );
  }
  return slots[0]!;
}

function findObjects(lib: Pkcs11Types.PKCS11, session: Handle, template: Pkcs11Types.Template): Handle[] {
  lib.C_FindObjectsInit(session, template);
  try {
    return lib.C_FindObjects(session, 100);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

/**
 * A signing key on a PKCS#11 token (an HSM, a smart card, SoftHSM in the tests). The key never leaves the token:
 * the token is given the SHA-256 digest of the signed attributes (CKM_RSA_PKCS over a DigestInfo, or CKM_ECDSA),
 * and the certificate and its chain are read from the token's certificate objects.
 *
 * One module initialisation per process and module path; one login per signer, kept by a session held open for
 * the signer's life (a token's login belongs to the application while any of its sessions is open); each
 * signature in a session of its own, so concurrent finalizations do not share an operation.
 */
export async function createPkcs11Signer(opts: Pkcs11SignerOptions): Promise<Signer> {
  const p = loadBinding();
  const lib = moduleFor(opts.modulePath);
  const slot = findSlot(lib, opts);
  const tokenKey = `${opts.modulePath}#${lib.C_GetTokenInfo(slot).serialNumber.trim()}`;

  /** Opens the session that holds the login, and logs in (unless the application is logged in already). */
  const login = async (): Promise<Handle> => {
    const pin = await readPin(opts);
    const pinHash = createHash('sha256').update(pin).digest('hex');
    if (refusedPins.get(tokenKey) === pinHash) {
      throw new SignerConfigError(
        'PKCS#11 login refused: the PIN is wrong (CKR_PIN_INCORRECT); it is not offered again until SIGNING_PKCS11_PIN or SIGNING_PKCS11_PIN_FILE changes.',
      );
    }
    let session: Handle;
    try {
      session = lib.C_OpenSession(slot, p.CKF_SERIAL_SESSION);
    } catch (err) {
      throw new SignerConfigError(`PKCS#11 session could not be opened: ${describe(err)}`);
    }
    try {
      lib.C_Login(session, p.CKU_USER, pin);
    } catch (err) {
      const code = codeOf(err);
      if (code !== 'CKR_USER_ALREADY_LOGGED_IN') {
        lib.C_CloseSession(session);
        if (code === 'CKR_PIN_INCORRECT') refusedPins.set(tokenKey, pinHash);
        throw new SignerConfigError(`PKCS#11 login refused: ${describe(err)}`);
      }
    }
    refusedPins.delete(tokenKey);
    return session;
  };
  let anchor = await login();
  try {
    return await identify();
  } catch (err) {
    try {
      lib.C_CloseSession(anchor);
    } catch {
      // gone already
    }
    throw err;
  }

  /** Finds the key and its certificates, and proves they belong together with one signature. */
  async function identify(): Promise<Signer> {
    const keyTemplate: Pkcs11Types.Template = [{ type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }];
    if (opts.keyLabel !== undefined) keyTemplate.push({ type: p.CKA_LABEL, value: opts.keyLabel });
    if (opts.keyId !== undefined) keyTemplate.push({ type: p.CKA_ID, value: Buffer.from(opts.keyId, 'hex') });
    const keys = findObjects(lib, anchor, keyTemplate);
    const named = [
      opts.keyLabel !== undefined && `label "${opts.keyLabel}"`,
      opts.keyId !== undefined && `id ${opts.keyId}`,
    ]
      .filter(Boolean)
      .join(' and ');
    if (keys.length !== 1) {
      throw new SignerConfigError(
        keys.length === 0
          ? `The PKCS#11 token has no private key${named ? ` with ${named}` : ''} (SIGNING_PKCS11_KEY_LABEL / SIGNING_PKCS11_KEY_ID).`
          : `The PKCS#11 token has ${keys.length} private keys${named ? ` with ${named}` : ''}; name one with SIGNING_PKCS11_KEY_LABEL or SIGNING_PKCS11_KEY_ID.`,
      );
    }
    const attrs = lib.C_GetAttributeValue(anchor, keys[0]!, [
      { type: p.CKA_ID },
      { type: p.CKA_LABEL },
      { type: p.CKA_KEY_TYPE },
    ]);
    const keyId = attrs[0]?.value;
    const keyLabel = attrs[1]?.value?.toString();
    const ckKeyType = attrs[2]?.value?.readUIntLE(0, 4);

    // The certificate: the one with the key's CKA_ID (else its label); the others on the token may be its chain.
    const certs = findObjects(lib, anchor, [{ type: p.CKA_CLASS, value: p.CKO_CERTIFICATE }]).map((h) => {
      const [id, label, value] = lib.C_GetAttributeValue(anchor, h, [
        { type: p.CKA_ID },
        { type: p.CKA_LABEL },
        { type: p.CKA_VALUE },
      ]);
      return {
        id: id?.value,
        label: label?.value?.toString(),
        der: value?.value as Buffer,
      };
    });
    const leaf =
      certs.find((c) => keyId && keyId.length > 0 && c.id?.equals(keyId)) ??
      certs.find((c) => keyLabel !== undefined && c.label === keyLabel);
    if (!leaf) {
      throw new SignerConfigError(
        `The PKCS#11 token holds no certificate for its private key (a certificate object with the key's CKA_ID or label).`,
      );
    }
    const keyType = certificateKeyType(leaf.der);
    const expected = keyType === 'rsa' ? p.CKK_RSA : p.CKK_EC;
    if (ckKeyType !== undefined && ckKeyType !== expected)
      throw new SignerConfigError('The PKCS#11 private key is not of the certificate key type.');

    const findKey = (session: Handle): Handle => {
      const found = findObjects(lib, session, keyTemplate);
      if (found.length !== 1)
        throw new SignerConfigError('The PKCS#11 private key is no longer on the token.');
      return found[0]!;
    };

    /** One signature in a session of its own; logs in again when the token forgot the login (re-inserted, reset). */
    const signDigest = async (digest: Buffer): Promise<Buffer> => {
      let session: Handle;
      try {
        session = lib.C_OpenSession(slot, p.CKF_SERIAL_SESSION);
      } catch (err) {
        throw new SignerConfigError(`PKCS#11 session could not be opened: ${describe(err)}`);
      }
      try {
        if (!USER_STATES.has(lib.C_GetSessionInfo(session).state)) {
          try {
            lib.C_CloseSession(anchor);
          } catch {
            // already gone with the old login
          }
          anchor = await login();
        }
        const key = findKey(session);
        const mechanism = keyType === 'rsa' ? p.CKM_RSA_PKCS : p.CKM_ECDSA;
        const input = keyType === 'rsa' ? digestInfoSha256(digest) : digest;
        lib.C_SignInit(session, { mechanism }, key);
        const out = await lib.C_SignAsync(session, input, Buffer.alloc(1024));
        return keyType === 'rsa' ? Buffer.from(out) : ecdsaRawToDer(out);
      } catch (err) {
        if (err instanceof SignerConfigError) throw err;
        throw new SignerConfigError(`The PKCS#11 token did not sign: ${describe(err)}`);
      } finally {
        try {
          lib.C_CloseSession(session);
        } catch {
          // a removed token closes its sessions itself
        }
      }
    };

    const x509 = new X509Certificate(leaf.der);
    const others = certs.filter((c) => c !== leaf).map((c) => c.der);
    const signer: Signer = {
      kind: 'pkcs11',
      certificate: leaf.der,
      chain: orderChain(leaf.der, others),
      development: false,
      subject: x509.subject.replace(/\n/g, ', '),
      keyType,
      sign: (data) => signDigest(createHash('sha256').update(data).digest()),
    };

    // The key must be the certificate's: one signature now rather than a file no validator accepts later.
    const probe = Buffer.from('Wathiq signing key check');
    const signature = await signer.sign(probe);
    if (!cryptoVerify('sha256', probe, x509.publicKey, signature)) {
      throw new SignerConfigError(
        "The PKCS#11 private key does not match the certificate with the key's id.",
      );
    }
    return signer;
  }
}
