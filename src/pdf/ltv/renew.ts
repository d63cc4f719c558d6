import { readCert } from './certificates.ts';
import { addDocTimestamp } from './doc-timestamp.ts';
import { appendDss } from './dss.ts';
import { collectValidationData } from './extend.ts';
import { cmsCertificates, pdfSignatures } from './pdf-signatures.ts';
import type { RevocationOptions } from './revocation.ts';

const TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

/**
 * When the certificate of the time-stamp authority that made the file's last document time-stamp expires: the
 * archive time-stamp must be renewed before then. Undefined when the file has no document time-stamp.
 */
export async function archiveTimestampExpiry(pdf: Uint8Array): Promise<Date | undefined> {
  const last = (await pdfSignatures(pdf)).filter((s) => s.subFilter === 'ETSI.RFC3161').at(-1);
  if (!last) return undefined;
  const certs = cmsCertificates(last.cms).map(readCert);
  const tsa = certs.find((c) => c.x509.keyUsage?.includes(TIME_STAMPING)) ?? certs[0];
  return tsa ? new Date(tsa.x509.validTo) : undefined;
}

/**
 * Renews a B-LTA file's archive time-stamp (ETSI EN 319 142-1 5.5, "LTV-enabling" then time-stamping again): adds
 * the last document time-stamp's chain and revocation data to the DSS, then a new document time-stamp over it,
 * both as incremental updates. Returns the new file and when the new time-stamp's certificate expires.
 */
export async function renewArchiveTimestamp(
  pdf: Uint8Array,
  opts: { tsaUrl: string; tsaTimeoutMs?: number; revocation: RevocationOptions },
): Promise<{ pdf: Buffer; expiresAt: Date }> {
  const last = (await pdfSignatures(pdf)).filter((s) => s.subFilter === 'ETSI.RFC3161').at(-1);
  if (!last) throw new Error('the file has no document time-stamp to renew (not B-LTA)');
  const data = await collectValidationData(cmsCertificates(last.cms), opts.revocation);
  const withData = await appendDss(pdf, data);
  const out = await addDocTimestamp(withData, { tsaUrl: opts.tsaUrl, tsaTimeoutMs: opts.tsaTimeoutMs });
  const expiresAt = await archiveTimestampExpiry(out);
  if (!expiresAt) throw new Error('the renewed file has no document time-stamp');
  return { pdf: out, expiresAt };
}
