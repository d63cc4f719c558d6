// Mounts Scalar's API reference on the OpenAPI document the page names. This script runs before the renderer's
// bundle (both are deferred, in order) and mounts once the bundle has run (DOMContentLoaded follows every deferred
// script). Every option that would reach another site is off: the page's CSP allows only this origin, and an
// integrator's key typed into the try-it console must go nowhere but this API.

// The bundle's zod probes for eval (Function('')) as it loads, which the CSP refuses and reports as a violation.
// jitless tells it not to try; zod reads this shared object and keeps one it finds.
globalThis.__zod_globalConfig ??= {};
globalThis.__zod_globalConfig.jitless = true;

document.addEventListener('DOMContentLoaded', () => {
  const root = document.getElementById('reference');
  window.Scalar.createApiReference(root, {
    url: root.dataset.document,
    // The key the console sends is the document's one scheme (Bearer key:secret), chosen from the start.
    authentication: { preferredSecurityScheme: 'apiKey' },
    // The key stays in the tab's memory, never in localStorage.
    persistAuth: false,
    // Every operation listed and drawn from the start, not only the first tag's.
    defaultOpenAllTags: true,
    // The default fonts come from fonts.scalar.com; the system's fonts are used instead.
    withDefaultFonts: false,
    // "Ask AI" sends the document and questions to Scalar's service; it is on by default on localhost.
    agent: { disabled: true },
    // The button opens the document in client.scalar.com.
    hideClientButton: true,
    showDeveloperTools: 'never',
    telemetry: false,
  });
});
