/** Encodings a signature needs when the key is elsewhere and only a digest is sent to it. */

/** DER DigestInfo prefix for SHA-256 (RFC 8017 9.2, note 1): what CKM_RSA_PKCS pads and signs. */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

export function digestInfoSha256(digest: Buffer): Buffer {
  if (digest.length !== 32) throw new Error('a SHA-256 digest is 32 bytes');
  return Buffer.concat([SHA256_DIGEST_INFO, digest]);
}

function derInteger(value: Buffer): Buffer {
  let i = 0;
  while (i < value.length - 1 && value[i] === 0) i++;
  let v = value.subarray(i);
  if ((v[0] ?? 0) & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
  return Buffer.concat([Buffer.from([0x02, v.length]), v]);
}

/** PKCS#11's ECDSA signature (r and s, each the curve's size) as the DER Ecdsa-Sig-Value CMS carries. */
export function ecdsaRawToDer(raw: Buffer): Buffer {
  if (raw.length === 0 || raw.length % 2 !== 0) throw new Error('an ECDSA signature is r and s of one size');
  const half = raw.length / 2;
  const body = Buffer.concat([derInteger(raw.subarray(0, half)), derInteger(raw.subarray(half))]);
  if (body.length > 127) throw new Error('ECDSA signature too long');
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}
