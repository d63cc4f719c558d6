import type { SecretBox } from '../../auth/secret-box.ts';
import { verifyPassword } from '../../auth/passwords.ts';
import {
  matchTotp,
  newRecoveryCode,
  newTotpSecret,
  normalizeRecoveryCode,
  normalizeTotpInput,
  otpauthUri,
  recoveryCodeHash,
} from '../../auth/totp.ts';
import type { Knex } from '../../db/knex.ts';
import { accountsStore } from './accounts-store.ts';
import { secondFactorStore } from './second-factor-store.ts';
import { totpSecretContext } from '../../db/sealed-columns.ts';

/**
 * The dashboard's second factor for one account: enrol a TOTP app (confirmed by a first valid code before it
 * takes effect), recovery codes shown once, check a code at sign-in (each code once: a time step already used,
 * or a recovery code already spent, is refused), and turn it off. Surfaces throttle the attempts; this module
 * only decides.
 */
export interface SecondFactorDeps {
  db: Knex;
  secrets: SecretBox;
}

export const RECOVERY_CODE_COUNT = 10;

/** The secret box context: a sealed secret opens only on the row of the account it was sealed for. */
// The context is the one secrets:reseal reseals this column under (src/db/sealed-columns.ts).
const sealContext = totpSecretContext;

export type SecondFactorStatus =
  | { state: 'off' }
  | { state: 'pending'; secret: string; uri: string }
  | { state: 'on'; since: Date; recoveryCodesLeft: number };

export async function secondFactorStatus(
  deps: SecondFactorDeps,
  account: { id: string; email: string },
): Promise<SecondFactorStatus> {
  const store = secondFactorStore(deps.db);
  const enrolment = await store.find(account.id);
  if (!enrolment) return { state: 'off' };
  if (enrolment.confirmedAt)
    return {
      state: 'on',
      since: enrolment.confirmedAt,
      recoveryCodesLeft: await store.unusedRecoveryCodes(account.id),
    };
  const secret = deps.secrets.open(enrolment.secretSealed, sealContext(account.id));
  return { state: 'pending', secret, uri: otpauthUri(secret, account.email) };
}

/** True when sign-in must ask this account for a code. */
export async function secondFactorRequired(deps: Pick<SecondFactorDeps, 'db'>, accountId: string) {
  const enrolment = await secondFactorStore(deps.db).find(accountId);
  return Boolean(enrolment?.confirmedAt);
}

/** A new secret waiting for confirmation (replacing an unconfirmed one); false when one is already in force. */
export async function startEnrolment(deps: SecondFactorDeps, accountId: string, now: Date): Promise<boolean> {
  const sealed = deps.secrets.seal(newTotpSecret(), sealContext(accountId));
  return secondFactorStore(deps.db).putPending(accountId, sealed, now);
}

export type ConfirmResult =
  { ok: true; recoveryCodes: string[] } | { ok: false; reason: 'no_enrolment' | 'wrong_code' };

/** Puts the enrolment in force when `input` is a valid code of its secret; returns the recovery codes, once. */
export async function confirmEnrolment(
  deps: SecondFactorDeps,
  accountId: string,
  input: string,
  now: Date,
): Promise<ConfirmResult> {
  const enrolment = await secondFactorStore(deps.db).find(accountId);
  if (!enrolment || enrolment.confirmedAt) return { ok: false, reason: 'no_enrolment' };
  const code = normalizeTotpInput(input);
  const secret = deps.secrets.open(enrolment.secretSealed, sealContext(accountId));
  const step = code === undefined ? undefined : matchTotp(secret, code, now);
  if (step === undefined) return { ok: false, reason: 'wrong_code' };

  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const codeHashes = recoveryCodes.map((c) => recoveryCodeHash(normalizeRecoveryCode(c)!));
  const confirmed = await deps.db.transaction((trx) =>
    secondFactorStore(trx).confirm({ accountId, step, codeHashes, now }),
  );
  return confirmed ? { ok: true, recoveryCodes } : { ok: false, reason: 'no_enrolment' };
}

export type VerifyResult =
  { ok: true; method: 'totp' | 'recovery' } | { ok: false; reason: 'wrong' | 'replayed' | 'not_enrolled' };

/**
 * Checks a code typed at sign-in (or to turn the factor off): a current TOTP code not used before, or an
 * unused recovery code, which is spent by this call.
 */
export async function verifySecondFactor(
  deps: SecondFactorDeps,
  accountId: string,
  input: string,
  now: Date,
): Promise<VerifyResult> {
  const store = secondFactorStore(deps.db);
  const enrolment = await store.find(accountId);
  if (!enrolment?.confirmedAt) return { ok: false, reason: 'not_enrolled' };

  const code = normalizeTotpInput(input);
  if (code !== undefined) {
    const secret = deps.secrets.open(enrolment.secretSealed, sealContext(accountId));
    const step = matchTotp(secret, code, now);
    if (step === undefined) return { ok: false, reason: 'wrong' };
    return (await store.useStep(accountId, step))
      ? { ok: true, method: 'totp' }
      : { ok: false, reason: 'replayed' };
  }
  const recovery = normalizeRecoveryCode(input);
  if (recovery === undefined) return { ok: false, reason: 'wrong' };
  return (await store.useRecoveryCode(accountId, recoveryCodeHash(recovery), now))
    ? { ok: true, method: 'recovery' }
    : { ok: false, reason: 'wrong' };
}

/** The account's password, checked as at sign-in (scrypt). */
export async function passwordMatches(
  deps: Pick<SecondFactorDeps, 'db'>,
  accountId: string,
  password: string,
): Promise<boolean> {
  const account = await accountsStore(deps.db).findById(accountId);
  const credentials = account && (await accountsStore(deps.db).findCredentialsByEmail(account.email));
  if (!credentials || credentials.account.id !== accountId) return false;
  return verifyPassword(password, credentials.passwordHash);
}

/** Turns the second factor off (the caller has checked a current code or the password). */
export async function disableSecondFactor(deps: Pick<SecondFactorDeps, 'db'>, accountId: string) {
  await deps.db.transaction((trx) => secondFactorStore(trx).remove(accountId));
}
