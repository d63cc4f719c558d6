import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, SecretBoxError, type SecretBox } from '../../src/auth/secret-box.ts';
import { verificationTokenContext } from '../../src/db/sealed-columns.ts';
import { verificationTokens } from '../../src/features/documents/read-documents.ts';

/** A secret box that counts the values it opens. */
function countingBox(): { box: SecretBox; opens: () => number } {
  const inner = createSecretBox([{ id: 'k1', key: randomBytes(32) }]);
  let opens = 0;
  return {
    box: {
      currentKeyId: inner.currentKeyId,
      seal: (plaintext, context) => inner.seal(plaintext, context),
      open: (sealed, context) => {
        opens++;
        return inner.open(sealed, context);
      },
      keyIdOf: (sealed) => inner.keyIdOf(sealed),
    },
    opens: () => opens,
  };
}

const sealFor = (box: SecretBox, documentId: string, token: string) =>
  box.seal(token, verificationTokenContext(documentId));

describe('opened verification tokens', () => {
  it('opens a sealed copy once and answers the same token after', () => {
    const { box, opens } = countingBox();
    const tokens = verificationTokens(box);
    const id = randomUUID();
    const sealed = sealFor(box, id, 'token-1');
    expect(tokens.open(id, sealed)).toBe('token-1');
    expect(tokens.open(id, sealed)).toBe('token-1');
    expect(opens()).toBe(1);
  });

  it('opens a new sealed copy of the same document (a replaced or resealed token) again', () => {
    const { box, opens } = countingBox();
    const tokens = verificationTokens(box);
    const id = randomUUID();
    expect(tokens.open(id, sealFor(box, id, 'old'))).toBe('old');
    expect(tokens.open(id, sealFor(box, id, 'new'))).toBe('new');
    expect(opens()).toBe(2);
  });

  it("keeps a copy bound to its document: another document's row with the same copy does not open", () => {
    const { box } = countingBox();
    const tokens = verificationTokens(box);
    const id = randomUUID();
    const sealed = sealFor(box, id, 'mine');
    expect(tokens.open(id, sealed)).toBe('mine');
    expect(() => tokens.open(randomUUID(), sealed)).toThrow(SecretBoxError);
  });

  it('stores nothing for a copy that does not open, so each try fails', () => {
    const { box, opens } = countingBox();
    const tokens = verificationTokens(box);
    const id = randomUUID();
    const tampered = sealFor(box, id, 'x').slice(0, -4) + 'AAAA';
    for (const bad of [tampered, 'not sealed', '', 'wqs1.k1.', '__proto__']) {
      expect(() => tokens.open(id, bad)).toThrow(SecretBoxError);
      expect(() => tokens.open(id, bad)).toThrow(SecretBoxError);
    }
    expect(() => tokens.open('__proto__', 'constructor')).toThrow(SecretBoxError);
    expect(opens()).toBe(11);
  });

  it('holds at most its limit, dropping the oldest first', () => {
    const { box, opens } = countingBox();
    const tokens = verificationTokens(box, 2);
    const docs = [randomUUID(), randomUUID(), randomUUID()].map((id) => ({
      id,
      sealed: sealFor(box, id, `t-${id}`),
    }));
    for (const d of docs) tokens.open(d.id, d.sealed);
    expect(opens()).toBe(3);
    tokens.open(docs[2]!.id, docs[2]!.sealed); // still held
    tokens.open(docs[1]!.id, docs[1]!.sealed); // still held
    expect(opens()).toBe(3);
    expect(tokens.open(docs[0]!.id, docs[0]!.sealed)).toBe(`t-${docs[0]!.id}`); // dropped: opened again
    expect(opens()).toBe(4);
  });
});
