import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type * as Pkcs11Types from 'pkcs11js';
import type { Pkcs11SignerOptions } from '../../config/signing-options.ts';
import { SignerConfigError } from './signer-interface.ts';

type Pkcs11Module = typeof Pkcs11Types;
export type Handle = Pkcs11Types.Handle;

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
export function codeOf(err: unknown): string | undefined {
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

export function describe(err: unknown): string {
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

export function findObjects(
  lib: Pkcs11Types.PKCS11,
  session: Handle,
  template: Pkcs11Types.Template,
): Handle[] {
  lib.C_FindObjectsInit(session, template);
  try {
    return lib.C_FindObjects(session, 100);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

/** A token found by the configuration: the module, its binding's constants, and the token's slot. */
export interface Pkcs11Token {
  p: Pkcs11Module;
  lib: Pkcs11Types.PKCS11;
  slot: Handle;
  opts: Pkcs11SignerOptions;
  /** Module and serial number: which token refused a PIN. */
  tokenKey: string;
}

export function openToken(opts: Pkcs11SignerOptions): Pkcs11Token {
  const p = loadBinding();
  const lib = moduleFor(opts.modulePath);
  const slot = findSlot(lib, opts);
  const tokenKey = `${opts.modulePath}#${lib.C_GetTokenInfo(slot).serialNumber.trim()}`;
  return { p, lib, slot, opts, tokenKey };
}

export function openSession(token: Pkcs11Token): Handle {
  try {
    return token.lib.C_OpenSession(token.slot, token.p.CKF_SERIAL_SESSION);
  } catch (err) {
    throw new SignerConfigError(`PKCS#11 session could not be opened: ${describe(err)}`);
  }
}

/** Closes a session that may be gone already (with the old login, or a removed token). */
export function closeQuietly(token: Pkcs11Token, session: Handle): void {
  try {
    token.lib.C_CloseSession(session);
  } catch {
    // a removed token closes its sessions itself
  }
}

/** Opens the session that holds the login, and logs in (unless the application is logged in already). */
export async function login(token: Pkcs11Token): Promise<Handle> {
  const { lib, p, tokenKey } = token;
  const pin = await readPin(token.opts);
  const pinHash = createHash('sha256').update(pin).digest('hex');
  if (refusedPins.get(tokenKey) === pinHash) {
    throw new SignerConfigError(
      'PKCS#11 login refused: the PIN is wrong (CKR_PIN_INCORRECT); it is not offered again until SIGNING_PKCS11_PIN or SIGNING_PKCS11_PIN_FILE changes.',
    );
  }
  const session = openSession(token);
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
}
