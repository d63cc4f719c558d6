import type { CscSignerOptions, Pkcs11SignerOptions } from '../../config/signing-options.ts';
import { createP12Signer, type P12SignerOptions } from './p12-signer.ts';
import { SignerConfigError, type Signer, type SignerKind } from './signer-interface.ts';

export { DEV_P12_FILE, keyObjectSigner, signerFromP12 } from './p12-signer.ts';
export { SIGNER_KINDS, SignerConfigError, type Signer, type SignerKind } from './signer-interface.ts';

export interface CreateSignerOptions extends P12SignerOptions {
  /** SIGNER; default p12. */
  kind?: SignerKind;
  /** SIGNER=pkcs11: the module, token, PIN and key (SIGNING_PKCS11_*). */
  pkcs11?: Pkcs11SignerOptions;
  /** SIGNER=csc: the Cloud Signature Consortium v2 service (SIGNING_CSC_*). */
  csc?: CscSignerOptions;
}

/**
 * Loads the signing identity of the configured kind: an HSM's key and certificates (PKCS#11), a remote signing
 * service's credential (CSC), or the PKCS#12 file — the configured one, or else the development certificate
 * (created on first use and reused afterwards). Refuses to run production on the development certificate.
 */
export async function createSigner(opts: CreateSignerOptions): Promise<Signer> {
  if (opts.kind === 'pkcs11') {
    if (!opts.pkcs11) throw new SignerConfigError('SIGNER=pkcs11 needs SIGNING_PKCS11_MODULE.');
    const { createPkcs11Signer } = await import('./pkcs11-signer.ts');
    return createPkcs11Signer(opts.pkcs11);
  }
  if (opts.kind === 'csc') {
    if (!opts.csc) throw new SignerConfigError('SIGNER=csc needs SIGNING_CSC_URL.');
    const { createCscSigner } = await import('./csc-signer.ts');
    return createCscSigner(opts.csc);
  }
  return createP12Signer(opts);
}
