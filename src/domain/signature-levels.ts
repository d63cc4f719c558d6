/** PAdES baseline levels (ETSI EN 319 142-1 6): B-B, B-T (a signature time-stamp), B-LT (plus validation data), B-LTA (plus a document time-stamp). */
export const SIGNATURE_LEVELS = ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const;
export type SignatureLevel = (typeof SIGNATURE_LEVELS)[number];
