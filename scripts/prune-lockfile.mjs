// Removes, from package-lock.json, optional dependencies that resolve nowhere in the tree.
//
// The npm registry this project's machines reach serves only some platforms' binaries (Linux x64, arm64), so
// `npm install` writes a lock that declares optional packages (macOS, Windows builds of @swc/core, …) without
// entries for them, and `npm ci` then refuses the lock as out of sync. Run `npm run lock:prune` after every
// `npm install` that changes the lock. Platforms that are served keep their entries.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const paths = Object.keys(lock.packages);
let removed = 0;
for (const entry of Object.values(lock.packages)) {
  const optional = entry.optionalDependencies;
  if (!optional) continue;
  for (const name of Object.keys(optional)) {
    if (!paths.some((p) => p === `node_modules/${name}` || p.endsWith(`/node_modules/${name}`))) {
      delete optional[name];
      removed++;
    }
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${removed} unresolvable optional dependencies removed`);
