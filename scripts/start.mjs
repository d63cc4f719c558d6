// `npm start` (and `start:api`, `start:worker`): runs src/main.ts as JavaScript compiled from exactly the sources
// in src/ now. The operator's CLI (bin/wathiq.mjs) runs src/cli.ts the same way, through `runSources('cli')`.
//   node scripts/start.mjs [api|worker]
//
// Under tsx every start pays for TypeScript support: its loader thread boots, and each of the ~1,000 modules a
// start loads passes through its hooks; that doubled the CPU a start spends loading modules (bench:start). So the
// sources are compiled once with esbuild (tsx's own compiler, module for module, the same output tsx runs) into
// node_modules/.cache/wathiq/, beside a fingerprint of what they were compiled from: the content of every file
// under src/, tsconfig.json, this script and esbuild's version. Each start recomputes the fingerprint (a few
// milliseconds) and compiles again on any difference before running anything, so compiled code that differs
// from the sources never runs. Files other than TypeScript (the pages' scripts and stylesheets) are copied as
// they are, as `npm run build` does. Should compiling fail, or the folder be unwritable, the sources run under
// tsx as before.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, cp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bumped whenever what is compiled, or how, changes in a way the fingerprint would not see. */
const FORMAT = 1;

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const require = createRequire(import.meta.url);

/** One folder per checkout (node_modules may be shared between checkouts). */
const outDir = path.join(
  root,
  'node_modules',
  '.cache',
  'wathiq',
  `compiled-${createHash('sha256').update(root).digest('hex').slice(0, 12)}`,
);
const FINGERPRINT_FILE = '.fingerprint';

const readFingerprint = () => readFile(path.join(outDir, FINGERPRINT_FILE), 'utf8').catch(() => undefined);

/** Every file under src/, sorted, as paths relative to src/. */
async function sourceFiles() {
  const entries = await readdir(src, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(src, path.join(e.parentPath, e.name)))
    .sort();
}

async function fingerprintOf(files, esbuildVersion) {
  const hash = createHash('sha256');
  const add = (name, content) => {
    hash.update(`${name}\0${content.length}\0`);
    hash.update(content);
  };
  add('format', String(FORMAT));
  add('esbuild', esbuildVersion);
  add('node', process.versions.node);
  add('scripts/start.mjs', await readFile(new URL(import.meta.url)));
  add('tsconfig.json', await readFile(path.join(root, 'tsconfig.json')));
  const contents = await Promise.all(files.map((f) => readFile(path.join(src, f))));
  files.forEach((f, i) => add(`src/${f}`, contents[i]));
  return hash.digest('hex');
}

/** Compiles src/ into a new folder beside outDir and puts it in outDir's place. */
async function compile(esbuild, files, fingerprint) {
  const staging = `${outDir}.${randomUUID()}`;
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: files.filter((f) => f.endsWith('.ts')).map((f) => path.join(src, f)),
      outdir: staging,
      outbase: src,
      // Bundling only so that the plugin below sees every import: each one stays an import of its own file.
      bundle: true,
      plugins: [
        {
          name: 'each-module-its-own-file',
          setup(build) {
            build.onResolve({ filter: /.*/ }, (args) => {
              if (args.kind === 'entry-point') return undefined;
              const relativeTs = /^\.\.?\//.test(args.path) && args.path.endsWith('.ts');
              return { path: relativeTs ? `${args.path.slice(0, -3)}.js` : args.path, external: true };
            });
          },
        },
      ],
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node.split('.')[0]}`,
      sourcemap: 'linked',
      logLevel: 'silent',
    });
    await Promise.all(
      files
        .filter((f) => !f.endsWith('.ts') && !f.endsWith('.md'))
        .map(async (f) => {
          await mkdir(path.dirname(path.join(staging, f)), { recursive: true });
          await cp(path.join(src, f), path.join(staging, f));
        }),
    );
    await writeFile(path.join(staging, FINGERPRINT_FILE), fingerprint);
    // Another start may have put the same copy in place meanwhile: then it stays, untouched under that start.
    if ((await readFingerprint()) === fingerprint) {
      await rm(staging, { recursive: true, force: true });
      return;
    }
    // The old copy goes aside and the new one takes its place; a start reading meanwhile finds no fingerprint and
    // compiles for itself.
    const old = `${outDir}.old-${randomUUID()}`;
    await rename(outDir, old).catch((err) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await rename(staging, outDir);
    await rm(old, { recursive: true, force: true });
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

/** `<entry>.js` compiled from the current sources, or undefined when it cannot be had (then tsx runs the sources). */
async function compiledEntry(entry) {
  // tsx's own esbuild: tsx is a dependency, and this is the compiler it runs the sources with.
  const esbuild = createRequire(require.resolve('tsx'))('esbuild');
  const files = await sourceFiles();
  const fingerprint = await fingerprintOf(files, esbuild.version);
  if ((await readFingerprint()) !== fingerprint) {
    await mkdir(path.dirname(outDir), { recursive: true });
    await compile(esbuild, files, fingerprint);
  }
  return path.join(outDir, `${entry}.js`);
}

/** Runs src/<entry>.ts: compiled when the sources compile, under tsx otherwise. */
export async function runSources(entry) {
  let compiled;
  try {
    compiled = await compiledEntry(entry);
  } catch (err) {
    process.stderr.write(
      `Running src/ under tsx: compiling it to ${outDir} failed (${err instanceof Error ? err.message : String(err)})\n`,
    );
  }
  if (compiled) {
    // Stack traces name the TypeScript sources, as under tsx.
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(compiled).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(path.join(src, `${entry}.ts`)).href);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await runSources('main');
