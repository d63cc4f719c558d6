import type { SecretBox } from '../../auth/secret-box.ts';
import { randomToken, sha256Hex } from '../../auth/tokens.ts';
import type { Db } from '../../db/knex.ts';
import { verificationTokenContext } from '../../db/sealed-columns.ts';

/**
 * Tokens of the public verification page (`/v/{token}`, migrations 014 and 030): one per document, 128 random bits
 * or more, reserved before the certificate that prints it is composed and never changed afterwards. Looked up by
 * SHA-256; the sealed copy is what prints the same URL again (a retried finalization, `verification_url`).
 */
export interface VerificationRow {
  document_id: string;
  token_sha256: string;
  token_sealed: string;
  created_at: Date;
}

/** 16 random bytes: 128 bits, 22 base64url characters (a short URL on a printed page). */
export const VERIFICATION_TOKEN_BYTES = 16;
/** What a token looks like; anything else names no document and costs no query. */
export const VERIFICATION_TOKEN = /^[A-Za-z0-9_-]{22,64}$/;

export function verificationsStore(db: Db) {
  return {
    /**
     * The document's token: the one reserved earlier (by a previous attempt, or a concurrent one), or a new one.
     * A retried finalization therefore prints the same URL.
     */
    async reserve(documentId: string, secrets: SecretBox): Promise<string> {
      const token = randomToken(VERIFICATION_TOKEN_BYTES);
      const inserted = await db('document_verifications')
        .insert({
          document_id: documentId,
          token_sha256: sha256Hex(token),
          token_sealed: secrets.seal(token, verificationTokenContext(documentId)),
        })
        .onConflict('document_id')
        .ignore()
        .returning('document_id');
      // Written by this call: the token is the one just made. Otherwise an earlier attempt's is read back.
      if (inserted.length > 0) return token;
      const row = await db<VerificationRow>('document_verifications')
        .where({ document_id: documentId })
        .first();
      if (!row) throw new Error(`could not reserve the verification token of ${documentId}`);
      return secrets.open(row.token_sealed, verificationTokenContext(documentId));
    },

    /**
     * The document a token names, looked up by the token's SHA-256 (the index compares digests; the table holds no
     * usable token). Undefined for a malformed or unknown token.
     */
    async findDocumentId(token: string | undefined): Promise<string | undefined> {
      if (!token || !VERIFICATION_TOKEN.test(token)) return undefined;
      const row = await db<VerificationRow>('document_verifications')
        .where({ token_sha256: sha256Hex(token) })
        .first();
      return row?.document_id;
    },

    /** The document's token, opened; undefined when it has none. */
    async tokenOf(documentId: string, secrets: SecretBox): Promise<string | undefined> {
      const row = await db<VerificationRow>('document_verifications')
        .where({ document_id: documentId })
        .first();
      return row && secrets.open(row.token_sealed, verificationTokenContext(documentId));
    },
  };
}

/** `{PUBLIC_BASE_URL}/v/{token}`: what the certificate prints and its QR code holds. */
export const VERIFY_PREFIX = '/v';
export function verificationUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}${VERIFY_PREFIX}/${token}`;
}
