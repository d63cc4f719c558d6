/**
 * Text a person reads must show the characters it holds in the order they were typed. Unicode's explicit
 * directional formatting characters break that: an override (LRO U+202D, RLO U+202E) draws what follows
 * backwards (`Invoice \u202Efdp.exe` reads "Invoice exe.pdf"), an embedding (LRE U+202A, RLE U+202B, closed by
 * PDF U+202C) or an isolate (LRI U+2066, RLI U+2067, FSI U+2068, closed by PDI U+2069) changes the direction of
 * what follows, and one left open reaches past the end of the field into the text around it (the rest of a
 * WhatsApp message, a certificate line, a page). They are refused in every field a person sees.
 *
 * The marks LRM U+200E, RLM U+200F and ALM U+061C are allowed. They are invisible characters with a direction
 * and no reach: they cannot reverse letters or open anything that runs on, only settle where neighbouring
 * punctuation and digits go, and Arabic and mixed Arabic–Latin text uses them for exactly that (a Latin name or
 * a number inside an Arabic title; Arabic keyboards type them). The pages put every field in its own `<bdi>`,
 * so even a mark cannot move the text around it there.
 */
export const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

/** The same rule as a whole-string pattern (for schemas and the OpenAPI document). */
export const NO_BIDI_CONTROLS = /^[^\u202A-\u202E\u2066-\u2069]*$/;

export function hasBidiControl(text: string): boolean {
  return BIDI_CONTROLS.test(text);
}

/** The 422 message for `field`. */
export function bidiControlMessage(field: string): string {
  return `${field} must not contain bidirectional embedding, override or isolate characters (U+202A to U+202E, U+2066 to U+2069)`;
}
