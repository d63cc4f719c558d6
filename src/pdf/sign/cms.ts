import { type KeyObject, createHash, sign as cryptoSign } from 'node:crypto';
import forge from 'node-forge';

/**
 * CMS SignedData (RFC 5652) assembled with node-forge's ASN.1 encoder and signed with Node's crypto, with the
 * signed attributes PAdES baseline asks for (ETSI EN 319 142-1): content-type, message-digest and ESS
 * signing-certificate-v2 — and no signing-time (the time is in the PDF signature dictionary).
 */
const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  sha256: '2.16.840.1.101.3.4.2.1',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

const seq = (v: Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, v);
const set = (v: Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, v);
export const oid = (o: string) =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
const octets = (b: Buffer) =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, b.toString('binary'));
const int = (n: number) =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(n).getBytes());
const nul = () => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '');
const explicit = (tag: number, v: Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, tag, true, [v]);
export const der = (a: Asn1) => Buffer.from(asn1.toDer(a).getBytes(), 'binary');
export const fromDer = (b: Buffer) => asn1.fromDer(b.toString('binary'), true);
const sha256Alg = () => seq([oid(OID.sha256), nul()]);

/** DER orders the members of a SET OF by their encodings. */
function sortedSet(items: Asn1[]): Asn1[] {
  return items
    .map((i) => ({ i, d: der(i) }))
    .sort((a, b) => Buffer.compare(a.d, b.d))
    .map((x) => x.i);
}

function attribute(type: string, value: Asn1): Asn1 {
  return seq([oid(type), set([value])]);
}

/** The issuer Name and serialNumber INTEGER of a certificate, copied from its DER. */
function issuerAndSerial(certDer: Buffer): { issuer: Asn1; serial: Asn1 } {
  const cert = fromDer(certDer);
  const tbs = (cert.value as Asn1[])[0] as Asn1;
  const fields = tbs.value as Asn1[];
  const hasVersion = fields[0]?.tagClass === asn1.Class.CONTEXT_SPECIFIC;
  const serial = fields[hasVersion ? 1 : 0];
  const issuer = fields[hasVersion ? 3 : 2];
  if (!serial || !issuer) throw new Error('certificate is not an X.509 certificate');
  return { issuer, serial };
}

/** ESS signing-certificate-v2 (RFC 5035) for SHA-256: the hash algorithm is the default and so left out. */
function signingCertificateV2(certDer: Buffer): Asn1 {
  const { issuer, serial } = issuerAndSerial(certDer);
  const hash = createHash('sha256').update(certDer).digest();
  const generalNames = seq([explicit(4, issuer)]);
  return seq([seq([seq([octets(hash), seq([generalNames, serial])])])]);
}

export interface SignedDataOptions {
  /** Digest (SHA-256) of the content: the PDF byte ranges, or the encapsulated content. */
  contentDigest: Buffer;
  /** eContentType; id-data for a PDF signature. */
  contentType?: string;
  /** Encapsulated content (a time-stamp token's TSTInfo); omitted for a detached PDF signature. */
  eContent?: Buffer;
  certificate: Buffer;
  chain?: Buffer[];
  /** The key that signs: a KeyObject in this process, or a signer whose key is elsewhere (an HSM, a service). */
  privateKey?: KeyObject;
  signer?: SignatureOperation;
  /** Called with the signature value, returns unsigned attributes to add (a signature time-stamp). */
  unsignedAttributes?: (signature: Buffer) => Promise<{ type: string; value: Buffer }[]>;
}

/** A signing key reached through an asynchronous operation (see Signer in signer.ts). */
export interface SignatureOperation {
  keyType: 'rsa' | 'ec';
  /**
   * The signature with SHA-256 over `data` (the DER of the signed attributes): RSA PKCS#1 v1.5, or ECDSA as a
   * DER Ecdsa-Sig-Value.
   */
  sign(data: Buffer): Promise<Buffer>;
}

function keyObjectOperation(key: KeyObject): SignatureOperation {
  const type = key.asymmetricKeyType;
  if (type !== 'rsa' && type !== 'ec')
    throw new Error(`signing keys of type ${type ?? 'unknown'} are not supported`);
  return { keyType: type, sign: (data) => Promise.resolve(cryptoSign('sha256', data, key)) };
}

/** Builds a CMS ContentInfo holding SignedData with one signer. */
export async function buildSignedData(opts: SignedDataOptions): Promise<Buffer> {
  const contentType = opts.contentType ?? OID.data;
  const signedAttrs = sortedSet([
    attribute(OID.contentType, oid(contentType)),
    attribute(OID.messageDigest, octets(opts.contentDigest)),
    attribute(OID.signingCertificateV2, signingCertificateV2(opts.certificate)),
  ]);
  // The signature covers the attributes encoded as a SET (tag 0x31), not as the [0] IMPLICIT field.
  const toSign = der(set(signedAttrs));
  const operation = opts.signer ?? (opts.privateKey && keyObjectOperation(opts.privateKey));
  if (!operation) throw new Error('buildSignedData needs a signer or a private key');
  const signatureAlg =
    operation.keyType === 'rsa' ? seq([oid(OID.rsaEncryption), nul()]) : seq([oid(OID.ecdsaWithSha256)]);
  const signature = await operation.sign(toSign);

  const { issuer, serial } = issuerAndSerial(opts.certificate);
  const signerInfo: Asn1[] = [
    int(1),
    seq([issuer, serial]),
    sha256Alg(),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, signedAttrs),
    signatureAlg,
    octets(signature),
  ];
  const unsigned = opts.unsignedAttributes ? await opts.unsignedAttributes(signature) : [];
  if (unsigned.length > 0) {
    signerInfo.push(
      asn1.create(
        asn1.Class.CONTEXT_SPECIFIC,
        1,
        true,
        sortedSet(unsigned.map((u) => attribute(u.type, fromDer(u.value)))),
      ),
    );
  }

  const encap: Asn1[] = [oid(contentType)];
  if (opts.eContent) encap.push(explicit(0, octets(opts.eContent)));
  const certificates = [opts.certificate, ...(opts.chain ?? [])].map((c) => fromDer(c));
  const signedData = seq([
    int(contentType === OID.data ? 1 : 3),
    set([sha256Alg()]),
    seq(encap),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, certificates),
    set([seq(signerInfo)]),
  ]);
  return der(seq([oid(OID.signedData), explicit(0, signedData)]));
}
