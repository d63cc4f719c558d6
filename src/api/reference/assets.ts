import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AssetSource } from '../../http/asset-catalog.ts';

const require = createRequire(import.meta.url);

/**
 * Scalar's standalone browser build: one file holding the renderer, Vue and the try-it console, which runs no
 * eval and loads nothing from elsewhere once its default fonts are turned off (public/reference.js). The package
 * exports no path to it, so it is found beside the package's main module.
 */
const scalarBundle = () =>
  path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');

/** Everything the reference page loads besides itself and the OpenAPI document. The build compresses these. */
export const REFERENCE_ASSET_SOURCES: readonly AssetSource[] = [
  { kind: 'file', name: 'scalar.js', path: scalarBundle, type: 'text/javascript' },
  {
    kind: 'file',
    name: 'reference.js',
    path: () => fileURLToPath(new URL('./public/reference.js', import.meta.url)),
    type: 'text/javascript',
  },
];
