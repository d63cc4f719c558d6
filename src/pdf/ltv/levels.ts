import type { SignatureLevel } from '../../domain/signature-levels.ts';

export { SIGNATURE_LEVELS, type SignatureLevel } from '../../domain/signature-levels.ts';

/** Whether a level needs a time-stamp authority (all but B-B). */
export const needsTimestamp = (level: SignatureLevel) => level !== 'B-B';
