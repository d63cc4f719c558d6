import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { randomToken } from '../../auth/tokens.ts';
import type { Db } from '../../db/knex.ts';
import { accountsStore, type Account } from './accounts-store.ts';

// Unknown emails are checked against this hash, so they cost the same scrypt time as a real account.
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = () => (dummyHash ??= hashPassword(randomToken(16)));

/**
 * The account whose email (any case) and password these are, or undefined. An unknown email takes as long as a
 * wrong password, so the answer's timing does not tell which emails have accounts.
 */
export async function accountByPassword(
  db: Db,
  email: string,
  password: string,
): Promise<Account | undefined> {
  const credentials = await accountsStore(db).findCredentialsByEmail(email);
  const matches = await verifyPassword(password, credentials?.passwordHash ?? (await dummyPasswordHash()));
  return matches ? credentials?.account : undefined;
}
