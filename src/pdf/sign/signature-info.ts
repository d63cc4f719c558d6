import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { der, fromDer } from './cms.ts';

/** What the API tells about a signature's certificate. */
export interface CertificateSummary {
  /** RFC 2253-like, comma separated: "CN=…, O=…". */
  subject: string;
  issuer: string;
  /** Hex, uppercase, as X.509 tools print it. */
  serial: string;
  not_after: Date;
}

const oneLine = (name: string) => name.replace(/\n/g, ', ');

export function certificateSummary(certificate: Buffer): CertificateSummary {
  const x509 = new X509Certificate(certificate);
  return {
    subject: oneLine(x509.subject),
    issuer: oneLine(x509.issuer),
    serial: x509.serialNumber.toUpperCase(),
    not_after: new Date(x509.validTo),
  };
}

const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

/**
 * The subject of the certificate that signed an RFC 3161 time-stamp token (a CMS SignedData): the one the signer
 * info names by issuer and serial, else the one for time-stamping. Null when the token carries no certificate.
 */
export function timestampAuthorityOf(token: Buffer): string | null {
  try {
    const contentInfo = fromDer(token).value as Asn1[];
    const signedData = ((contentInfo[1]?.value as Asn1[])[0]?.value ?? []) as Asn1[];
    const certField = signedData.find(
      (f) => f.tagClass === asn1.Class.CONTEXT_SPECIFIC && (f.type as number) === 0,
    );
    const certs = ((certField?.value ?? []) as Asn1[]).map((c) => new X509Certificate(der(c)));
    const signerInfos = (signedData[signedData.length - 1]?.value ?? []) as Asn1[];
    const sid = ((signerInfos[0]?.value as Asn1[] | undefined)?.[1]?.value ?? []) as Asn1[];
    const serial = sid[1] ? Buffer.from(sid[1].value as string, 'binary').toString('hex') : undefined;
    const bySerial = certs.find(
      (c) => serial !== undefined && BigInt(`0x${c.serialNumber}`) === BigInt(`0x${serial || '0'}`),
    );
    const tsa = bySerial ?? certs.find((c) => c.keyUsage?.includes('1.3.6.1.5.5.7.3.8')) ?? certs[0];
    return tsa ? oneLine(tsa.subject) : null;
  } catch {
    return null;
  }
}
