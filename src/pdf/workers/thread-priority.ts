/**
 * PDF threads run their tasks at a lower CPU priority (Linux nice +10, per thread, through @napi-rs/nice): on a busy
 * machine the event loop, which answers every other request, is scheduled first.
 */
export const NICE_INCREMENT = 10;

/**
 * Lowers the calling thread's priority by NICE_INCREMENT. A PDF thread calls it once its code has loaded, not before
 * it starts (piscina's niceIncrement): at +10, a thread's start-up (loading pdf-lib, and TypeScript under tsx) on a
 * saturated machine took over 30 s and held an upload that long. Where the add-on or the call is not available, the
 * thread keeps its priority (as under piscina's option).
 */
export async function lowerThreadPriority(): Promise<void> {
  const addon = await import('@napi-rs/nice').catch(() => undefined);
  try {
    addon?.nice(NICE_INCREMENT);
  } catch {
    // not permitted here: the priority stays
  }
}
