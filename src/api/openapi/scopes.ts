/**
 * Scope sets of operations that need more than one scope. A key may hold `documents:write` or a `webhooks:*`
 * scope without `documents:read`; an operation that would hand such a key a document's existing data (in its
 * answer, or by sending it to a phone or URL the key chose) asks for `documents:read` as well, so that no
 * scope reads more than `documents:read` allows. docs/security.md ("Scopes") gives the table.
 */

/** Changes a document and answers with its data (the document, an approver's name and phone), or sends it out. */
export const CHANGES_AND_SHOWS_DOCUMENTS = ['documents:write', 'documents:read'] as const;

/** Points a webhook, which receives every event's document data, at a URL, or sends a stored event again. */
export const ROUTES_DOCUMENT_EVENTS = ['webhooks:write', 'documents:read'] as const;
