import { createHash, createPrivateKey } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import { OID, buildSignedData, der, fromDer, oid } from '../../src/pdf/sign/cms.ts';
import { type TestIdentity, certDer } from './pki.ts';

const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

export interface TestTsa {
  url: string;
  requests: number;
  close(): Promise<void>;
}

/**
 * A small RFC 3161 time-stamp authority on 127.0.0.1: answers each TimeStampReq with a token signed by the test
 * TSA certificate, echoing the message imprint and nonce.
 */
export async function startTestTsa(
  identity: TestIdentity,
  now: () => Date = () => new Date(),
): Promise<TestTsa> {
  const privateKey = createPrivateKey(identity.keyPem);
  let serial = 1;
  const state = { requests: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests += 1;
      void (async () => {
        const request = fromDer(Buffer.concat(chunks)).value as Asn1[];
        const imprint = request[1] as Asn1;
        const nonce = request
          .slice(2)
          .find((n) => n.tagClass === asn1.Class.UNIVERSAL && n.type === asn1.Type.INTEGER);
        const fields: Asn1[] = [
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(1).getBytes()),
          oid('1.3.6.1.4.1.55555.1.1'),
          imprint,
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(serial++).getBytes()),
          asn1.create(
            asn1.Class.UNIVERSAL,
            asn1.Type.GENERALIZEDTIME,
            false,
            asn1.dateToGeneralizedTime(now()),
          ),
        ];
        if (nonce) fields.push(nonce);
        const tstInfo = der(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, fields));
        const token = await buildSignedData({
          contentDigest: createHash('sha256').update(tstInfo).digest(),
          contentType: OID.tstInfo,
          eContent: tstInfo,
          certificate: certDer(identity),
          privateKey,
        });
        const resp = der(
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
            asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
              asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(0).getBytes()),
            ]),
            fromDer(token),
          ]),
        );
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(resp);
      })().catch((err: unknown) => {
        res.writeHead(500).end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tsa`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
