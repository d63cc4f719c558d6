import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Logger } from '../logger.ts';

/** Bumped whenever what the manifest records, or how the bundle is made, changes. */
const FORMAT = 1;

export interface WorkflowBundleOptions {
  workflowsPath: string;
  /** Tracing's workflow interceptor modules; they are part of the bundle, so of its key. */
  workflowInterceptorModules?: readonly string[];
}

interface Manifest {
  format: number;
  /** Everything the bundle was made from apart from files: the SDK's version and the bundler's options. */
  key: string;
  /** Every file webpack read to make the bundle, with the SHA-256 of its content when the bundle was made. */
  files: Record<string, string>;
  /** Paths webpack looked for and did not find: one appearing could change how an import resolves. */
  missing: string[];
  codeSha256: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

function sdkVersions(): string {
  const require = createRequire(import.meta.url);
  const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
  return `worker ${version('@temporalio/worker')}, workflow ${version('@temporalio/workflow')}`;
}

function keyOf(options: WorkflowBundleOptions): string {
  return sha256(
    JSON.stringify({
      format: FORMAT,
      sdk: sdkVersions(),
      node: process.versions.modules,
      workflowsPath: path.resolve(options.workflowsPath),
      interceptors: (options.workflowInterceptorModules ?? []).map((m) => path.resolve(m)),
    }),
  );
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** The cached bundle when every file it was made from is unchanged, and no missing path has appeared. */
async function readCached(dir: string, key: string): Promise<{ code: string } | undefined> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, 'workflow-bundle.json'), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  if (manifest.format !== FORMAT || manifest.key !== key) return undefined;
  const unchanged = await Promise.all([
    ...Object.entries(manifest.files).map(async ([file, hash]) => {
      const content = await readFile(file).catch(() => undefined);
      return content !== undefined && sha256(content) === hash;
    }),
    ...manifest.missing.map(async (file) => !(await exists(file))),
  ]);
  if (!unchanged.every(Boolean)) return undefined;
  const code = await readFile(path.join(dir, 'workflow-bundle.js'), 'utf8').catch(() => undefined);
  if (code === undefined || sha256(code) !== manifest.codeSha256) return undefined;
  return { code };
}

/** Bundles, recording every file webpack read (its own invalidation set) and every path it missed. */
async function bundle(
  options: WorkflowBundleOptions,
  logger: Logger,
): Promise<{ code: string; files: string[]; missing: string[] }> {
  let files: string[] = [];
  let missing: string[] = [];
  const { code } = await bundleWorkflowCode({
    workflowsPath: options.workflowsPath,
    ...(options.workflowInterceptorModules && {
      workflowInterceptorModules: [...options.workflowInterceptorModules],
    }),
    logger: quiet(logger),
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply(compiler) {
            compiler.hooks.done.tap('wathiq-bundle-files', (stats) => {
              files = [...stats.compilation.fileDependencies].filter((f) => path.isAbsolute(f));
              missing = [...stats.compilation.missingDependencies].filter((f) => path.isAbsolute(f));
            });
          },
        },
      ],
    }),
  });
  if (files.length === 0) throw new Error('the workflow bundler reported no files');
  return { code, files, missing };
}

/** The bundler's logger: its chatter at debug, its warnings and errors as they are. */
function quiet(logger: Logger) {
  return {
    trace: () => undefined,
    debug: () => undefined,
    info: () => undefined,
    warn: (message: string, meta?: Record<string, unknown>) => logger.warn(meta ?? {}, message),
    error: (message: string, meta?: Record<string, unknown>) => logger.error(meta ?? {}, message),
    log: () => undefined,
  };
}

/**
 * The workflow bundle, from `dir` while nothing it was made from has changed, else freshly made (and stored there
 * for the next start). Bundling is most of a warm start's time; the cache is never trusted past a change: the
 * manifest lists every file webpack read for the bundle (the workflow sources, everything they import, the SDK's
 * files, the package.json files resolution consulted) with its SHA-256, and every path webpack looked for and did
 * not find; any file changed or gone, or any missing path now present, and the bundle is made again. The key
 * holds the SDK's version and the bundler's options. A cache that cannot be written costs the next start a bundle,
 * nothing else.
 */
export async function cachedWorkflowBundle(
  options: WorkflowBundleOptions & { dir: string; logger: Logger },
): Promise<{ code: string; cached: boolean }> {
  const key = keyOf(options);
  const hit = await readCached(options.dir, key);
  if (hit) return { code: hit.code, cached: true };

  const started = Date.now();
  const made = await bundle(options, options.logger);
  const files: Record<string, string> = {};
  // A file changed while webpack ran may differ from what it read: then the hash below could vouch for code the
  // bundle does not hold, so nothing is cached.
  let changedMeanwhile = false;
  await Promise.all(
    made.files.map(async (file) => {
      // The bundler's entry is generated from the options (in the key), in memory: never on disk.
      if (file.endsWith('-autogenerated-entrypoint.cjs')) return;
      const info = await stat(file).catch(() => undefined);
      if (info?.isDirectory()) return; // folders webpack listed while resolving: `missing` covers what they lacked
      const content = await readFile(file).catch(() => undefined);
      if (!info || content === undefined || info.mtimeMs > started - 20) changedMeanwhile = true;
      else files[file] = sha256(content);
    }),
  );
  if (changedMeanwhile) {
    options.logger.warn('workflow sources changed while bundling; the bundle is not cached');
    return { code: made.code, cached: false };
  }
  const manifest: Manifest = {
    format: FORMAT,
    key,
    files,
    missing: made.missing,
    codeSha256: sha256(made.code),
  };
  try {
    await mkdir(options.dir, { recursive: true });
    // The code first, then the manifest that vouches for it, each written whole and renamed into place.
    for (const [name, content] of [
      ['workflow-bundle.js', made.code],
      ['workflow-bundle.json', JSON.stringify(manifest)],
    ] as const) {
      const temp = path.join(options.dir, `.${name}.${randomUUID()}`);
      await writeFile(temp, content);
      await rename(temp, path.join(options.dir, name)).catch(async (err: unknown) => {
        await rm(temp, { force: true });
        throw err;
      });
    }
  } catch (err) {
    options.logger.warn(
      { err, dir: options.dir },
      'workflow bundle not cached; the next start bundles again',
    );
  }
  return { code: made.code, cached: false };
}
