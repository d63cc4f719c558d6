import { z } from 'zod';
import { hashPassword } from '../../auth/passwords.ts';
import { PLANS } from '../../domain/plans.ts';
import type { Knex } from '../../db/knex.ts';
import { accountsStore, type Account } from './accounts-store.ts';
import { AppError } from '../../errors.ts';
import { issuesToDetails } from '../../domain/validation.ts';
import { bidiControlMessage, NO_BIDI_CONTROLS } from '../../domain/bidi.ts';
import { issueApiKey, type IssuedApiKey } from './api-keys.ts';

export const NewAccountInput = z.object({
  // Shown on every approval page and generated seal of the account (domain/bidi.ts).
  name: z.string().trim().min(1).max(255).regex(NO_BIDI_CONTROLS, bidiControlMessage('name')),
  email: z.email().max(320),
  password: z.string().min(10, 'must be at least 10 characters').max(1024),
  plan: z.enum(PLANS).default('basic'),
});
export type NewAccountInput = z.input<typeof NewAccountInput>;

/** Creates an account and its first API key (all scopes) in one transaction. */
export async function createAccountWithKey(
  db: Knex,
  input: NewAccountInput,
): Promise<{ account: Account; key: IssuedApiKey }> {
  const parsed = NewAccountInput.safeParse(input);
  if (!parsed.success) throw AppError.validation(issuesToDetails(parsed.error.issues));
  const { name, email, password, plan } = parsed.data;
  const passwordHash = await hashPassword(password);
  return db.transaction(async (trx) => {
    const existing = await accountsStore(trx).findCredentialsByEmail(email);
    if (existing) throw AppError.validation({ email: ['an account with this email already exists'] });
    const account = await accountsStore(trx).create({ name, email, passwordHash, plan });
    const key = await issueApiKey(trx, { accountId: account.id, name: 'Default key' });
    return { account, key };
  });
}
