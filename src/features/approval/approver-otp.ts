import { createHash, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import type { Approver } from '../documents/approvers-store.ts';
import { AppError } from '../../errors.ts';
import { languageFor } from '../../whatsapp/templates.ts';
import type { OtpSender } from '../../whatsapp/otp-message.ts';

/**
 * One-time codes of verified approvers (migration 019, table `approver_otp_codes`). An approver
 * has at most one code: 6 random digits, kept as an scrypt hash with its own salt, valid OTP_TTL_MINUTES, locked
 * after OTP_MAX_ATTEMPTS wrong tries, and a new one replaces it (at most one per OTP_RESEND_SECONDS and
 * OTP_MAX_SENDS_PER_HOUR an hour; a send WhatsApp did not take, answered 502, counts against neither). A right code is used up and gives the page a session proof: a random token
 * whose SHA-256 is stored here, valid OTP_SESSION_MINUTES, which the page sends back as an HttpOnly cookie.
 * Neither the code nor the proof ever reaches the workflow.
 */
type OtpConfig = Config['otp'];

interface OtpRow {
  approver_id: string;
  code_hash: string | null;
  salt: string | null;
  expires_at: Date | null;
  attempts: number;
  last_sent_at: Date | null;
  window_started_at: Date | null;
  sends_in_window: number;
  session_hash: string | null;
  session_expires_at: Date | null;
}

const TABLE = 'approver_otp_codes';
const HOUR_MS = 3_600_000;
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

const hashCode = async (code: string, salt: string) =>
  (await scryptAsync(code, Buffer.from(salt, 'hex'), 32)).toString('hex');
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

const retryAfter = (ms: number) => ({ 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) });

async function lockRow(trx: Knex.Transaction, approverId: string): Promise<OtpRow> {
  await trx(TABLE).insert({ approver_id: approverId }).onConflict('approver_id').ignore();
  return (await trx<OtpRow>(TABLE).where({ approver_id: approverId }).forUpdate().first())!;
}

/** Sends the approver a new code, within the resend limits (429 with Retry-After past them). */
export async function sendApproverCode(
  deps: { db: Knex; otp: OtpConfig; sender: OtpSender },
  approver: Approver,
  now = new Date(),
): Promise<{ expiresAt: Date }> {
  const { otp } = deps;
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const salt = randomBytes(16).toString('hex');
  const codeHash = await hashCode(code, salt);
  const expiresAt = new Date(now.getTime() + otp.ttlMs);
  const counted = await deps.db.transaction(async (trx) => {
    const row = await lockRow(trx, approver.id);
    const sinceLast = row.last_sent_at ? now.getTime() - row.last_sent_at.getTime() : Infinity;
    if (sinceLast < otp.resendMs) {
      throw new AppError(
        'rate_limited',
        `A code was sent less than ${Math.round(otp.resendMs / 1000)} seconds ago; wait before asking for another`,
        {},
        retryAfter(otp.resendMs - sinceLast),
      );
    }
    const windowStart =
      row.window_started_at && now.getTime() - row.window_started_at.getTime() < HOUR_MS
        ? row.window_started_at
        : now;
    const sends = windowStart === now ? 0 : row.sends_in_window;
    if (sends >= otp.maxSendsPerHour) {
      throw new AppError(
        'rate_limited',
        `At most ${otp.maxSendsPerHour} codes an hour can be sent to this approver`,
        {},
        retryAfter(windowStart.getTime() + HOUR_MS - now.getTime()),
      );
    }
    await trx(TABLE)
      .where({ approver_id: approver.id })
      .update({
        code_hash: codeHash,
        salt,
        expires_at: expiresAt,
        attempts: 0,
        last_sent_at: now,
        window_started_at: windowStart,
        sends_in_window: sends + 1,
      });
    // What the resend limits read before this send: put back if WhatsApp does not take the message.
    return {
      last_sent_at: row.last_sent_at,
      window_started_at: row.window_started_at,
      sends_in_window: row.sends_in_window,
    };
  });
  try {
    await deps.sender.send({
      phone: approver.phone,
      language: languageFor(approver.phone, approver.language),
      code,
    });
  } catch {
    // Not sent (WhatsApp answered an error, or did not answer): the attempt does not count against the resend
    // limits. The new code stays valid (a message that timed out may still arrive) unless another send replaced
    // it meanwhile, in which case that send's counting stands.
    await deps.db<OtpRow>(TABLE).where({ approver_id: approver.id, code_hash: codeHash }).update(counted);
    throw new AppError('bad_gateway', 'The code could not be sent over WhatsApp; try again shortly');
  }
  return { expiresAt };
}

/**
 * Checks a code. Right: the code is used up and the returned token is the page's proof. Wrong: 422 with the
 * tries left; none left, expired or never sent: the approver must ask for a new code (429, 422, 409).
 */
export async function verifyApproverCode(
  deps: { db: Knex; otp: OtpConfig },
  approver: Approver,
  code: string,
  now = new Date(),
): Promise<{ session: string; expiresAt: Date }> {
  const { otp } = deps;
  if (!/^\d{6}$/.test(code)) throw AppError.validation({ code: ['The code is 6 digits'] });
  const row = await deps.db<OtpRow>(TABLE).where({ approver_id: approver.id }).first();
  // Hash outside the transaction (scrypt takes a while); the row is checked again under its lock.
  const given = row?.salt ? await hashCode(code, row.salt) : undefined;
  const session = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + otp.sessionMs);
  const outcome = await deps.db.transaction(async (trx) => {
    const r = await trx<OtpRow>(TABLE).where({ approver_id: approver.id }).forUpdate().first();
    if (!r?.code_hash || !r.salt || !r.expires_at) return 'none' as const;
    if (r.attempts >= otp.maxAttempts) return 'locked' as const;
    if (r.expires_at.getTime() <= now.getTime()) return 'expired' as const;
    if (r.salt !== row?.salt || !given || !sameHex(given, r.code_hash)) {
      await trx(TABLE)
        .where({ approver_id: approver.id })
        .update({ attempts: r.attempts + 1 });
      return { wrong: otp.maxAttempts - r.attempts - 1 };
    }
    await trx(TABLE)
      .where({ approver_id: approver.id })
      .update({
        code_hash: null,
        salt: null,
        expires_at: null,
        session_hash: sha256(session),
        session_expires_at: expiresAt,
        verified_at: now,
      });
    return 'ok' as const;
  });
  if (outcome === 'ok') return { session, expiresAt };
  if (outcome === 'none')
    throw new AppError('no_code_requested', 'No code is waiting for this approver; ask for a code');
  if (outcome === 'locked')
    throw new AppError('code_locked', 'Too many wrong codes: this code is locked; ask for a new code');
  if (outcome === 'expired')
    throw AppError.validation({ code: ['The code has expired; ask for a new code'] });
  if (outcome.wrong <= 0)
    throw new AppError('code_locked', 'Too many wrong codes: this code is locked; ask for a new code');
  throw AppError.validation({
    code: [`Wrong code; ${outcome.wrong} ${outcome.wrong === 1 ? 'try' : 'tries'} left`],
  });
}

/** Whether `session` (the page's cookie) is the approver's current, unexpired proof. */
export async function hasVerifiedSession(
  db: Knex,
  approverId: string,
  session: string | undefined,
  now = new Date(),
): Promise<boolean> {
  if (!session || !/^[A-Za-z0-9_-]{43}$/.test(session)) return false;
  const row = await db<OtpRow>(TABLE).where({ approver_id: approverId }).first();
  if (!row?.session_hash || !row.session_expires_at) return false;
  if (row.session_expires_at.getTime() <= now.getTime()) return false;
  return sameHex(sha256(session), row.session_hash);
}
