import { z } from 'zod';

/** The value shapes the configuration slices share. Every variable arrives as a string (empty: unset). */

export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const port = z.coerce.number().int().min(0).max(65535);

export const intIn = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * A long activity's heartbeat time-out in seconds: 30 by default. Under 3 s, a live attempt on a loaded machine
 * could miss its heartbeats and be given up.
 */
export const heartbeatSeconds = (description: string) => intIn(3, 300).default(30).describe(description);

export const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** An http or https URL. */
export const httpUrl = () => z.url({ protocol: /^https?$/ });

// Meta's rules: template names are a-z, 0-9 and _; language codes look like ar or en_US.
export const templateName = z.string().regex(/^[a-z0-9_]{1,512}$/, 'a WhatsApp template name (a-z, 0-9, _)');
export const templateLanguage = z
  .string()
  .regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'a WhatsApp language code such as ar or en_US');
