import { randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { request } from 'undici';
import { OID, der, fromDer, oid } from './cms.ts';

const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

export class TimestampError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimestampError';
  }
}

/** A TimeStampReq (RFC 3161 2.4.1) for a SHA-256 digest, asking for the TSA's certificate. */
export function timestampRequest(digest: Buffer, nonce: Buffer): Buffer {
  return der(
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(1).getBytes()),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
          oid(OID.sha256),
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''),
        ]),
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, digest.toString('binary')),
      ]),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, positive(nonce)),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BOOLEAN, false, String.fromCharCode(0xff)),
    ]),
  );
}

const positive = (b: Buffer) => ((b[0] ?? 0) & 0x80 ? `\u0000${b.toString('binary')}` : b.toString('binary'));

/**
 * Asks an RFC 3161 time-stamp authority to stamp a digest (over HTTP, with a time limit and no redirects) and
 * returns the TimeStampToken (a CMS ContentInfo), after checking it stamps this digest with this nonce.
 */
export async function fetchTimestampToken(url: string, digest: Buffer, timeoutMs = 10_000): Promise<Buffer> {
  const nonce = randomBytes(8);
  let body: Buffer;
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: timestampRequest(digest, nonce),
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200)
      throw new TimestampError(`time-stamp authority answered HTTP ${res.statusCode}`);
  } catch (err) {
    if (err instanceof TimestampError) throw err;
    throw new TimestampError(`time-stamp authority unreachable: ${(err as Error).message}`);
  }
  return parseTimestampResponse(body, digest, nonce);
}

/** Checks a TimeStampResp (RFC 3161 2.4.2) and returns its token. */
export function parseTimestampResponse(body: Buffer, digest: Buffer, nonce?: Buffer): Buffer {
  let resp: Asn1;
  try {
    resp = fromDer(body);
  } catch {
    throw new TimestampError('time-stamp authority sent something that is not a TimeStampResp');
  }
  const [statusInfo, token] = resp.value as Asn1[];
  const status = statusInfo && ((statusInfo.value as Asn1[])[0]?.value as string | undefined);
  const code = status === undefined ? -1 : asn1.derToInteger(status);
  if (code !== 0 && code !== 1)
    throw new TimestampError(`time-stamp authority refused the request (status ${code})`);
  if (!token) throw new TimestampError('time-stamp response carries no token');
  const info = tstInfo(token);
  if (!info.imprint.equals(digest)) throw new TimestampError('time-stamp token stamps another digest');
  if (nonce && (!info.nonce || !stripZeros(info.nonce).equals(stripZeros(nonce)))) {
    throw new TimestampError('time-stamp token does not echo our nonce');
  }
  return der(token);
}

const stripZeros = (b: Buffer) => {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
};

/** The message imprint, nonce and time of a TimeStampToken's TSTInfo. */
export function tstInfo(token: Asn1): { imprint: Buffer; nonce?: Buffer; genTime: Date } {
  const signedData = ((token.value as Asn1[])[1]?.value as Asn1[])[0] as Asn1;
  const encap = (signedData.value as Asn1[])[2] as Asn1;
  const eContent = ((encap.value as Asn1[])[1]?.value as Asn1[])[0] as Asn1;
  const octetString =
    typeof eContent.value === 'string'
      ? eContent.value
      : eContent.value.map((p) => p.value as string).join('');
  const info = asn1.fromDer(octetString).value as Asn1[];
  const imprint = Buffer.from(((info[2]?.value as Asn1[])[1] as Asn1).value as string, 'binary');
  const genTime = asn1.generalizedTimeToDate(info[4]?.value as string);
  const nonceNode = info
    .slice(5)
    .find((n) => n.tagClass === asn1.Class.UNIVERSAL && n.type === asn1.Type.INTEGER);
  return {
    imprint,
    nonce: nonceNode ? Buffer.from(nonceNode.value as string, 'binary') : undefined,
    genTime,
  };
}
