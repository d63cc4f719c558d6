import { chmod, copyFile, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDb } from '../../src/db/knex.ts';
import { migrateLatest } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/logger.ts';
import { startEmbeddedPostgres } from '../../src/runtime/embedded-postgres.ts';
import { locateOrBuildTemporalCli } from '../../src/runtime/temporal-cli.ts';
import { devServerConfigFlags } from '../../src/runtime/temporal-dev-server.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { cachedWorkflowBundle } from '../../src/temporal/workflow-bundle-cache.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/temporal/search-attributes.ts';
import { APPROVAL_ASSET_SOURCES, APPROVAL_ASSETS_BASE } from '../../src/approval-page/assets.ts';
import { REFERENCE_ASSET_SOURCES } from '../../src/api/reference/assets.ts';
import { buildAssetCatalog } from '../../src/http/asset-catalog.ts';
import { compressedFileName, createPrecompressedAssets } from '../../src/http/precompressed.ts';
import { freePort } from './free-port.ts';
import { seedPageAssets } from './page-assets-seed.ts';
import { seedWorkflowBundle } from './workflow-bundle-seed.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDatabase: string;
    temporalAddress: string;
    temporalCliPath: string;
    workflowBundlePath: string;
    /** The workflow bundle's cache (code and manifest), for seeding a worker process's DATA_DIR/cache; '' if none. */
    workflowBundleCache: string;
    /** DATA_DIR of every test service: local files and the development signing certificate, never ./data. */
    dataDir: string;
    /**
     * This version's compressed page assets (made once per machine, content-addressed), a folder of the run's own:
     * test services read from it, and it seeds an API process's DATA_DIR/asset-cache (page-assets-seed.ts).
     */
    pageAssetCache: string;
  }
}

/**
 * Starts the real infrastructure once for the whole run: PostgreSQL (embedded, or TEST_DATABASE_URL), a template
 * database migrated once, a Temporal dev server (the CLI through @temporalio/testing, or TEMPORAL_ADDRESS), and
 * one workflow bundle shared by every test worker.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger({ logLevel: 'warn' }, { part: 'test-setup' });
  const teardown: (() => Promise<void>)[] = [];
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'wathiq-test-'));
  await chmod(scratch, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  teardown.push(() => rm(scratch, { recursive: true, force: true }));
  // Brotli runs in libuv's thread pool: it goes on while PostgreSQL and Temporal start and the workflow code bundles.
  const pageAssets = warmPageAssets(path.join(scratch, 'page-assets'));

  // Cached per checkout (and checked against every file it was made from), as a worker process caches its own.
  // webpack runs while PostgreSQL and Temporal start, as brotli does.
  const workflowBundleCache = path.resolve('node_modules/.cache/wathiq/workflow-bundle');
  const bundling = cachedWorkflowBundle({ workflowsPath: workflowsPath(), dir: workflowBundleCache, logger });

  const templateDatabase = `wathiq_template_${process.pid}`;
  /** PostgreSQL (embedded, or TEST_DATABASE_URL) and the template database migrated once; resolves its admin URL. */
  const startDatabase = async (): Promise<string> => {
    let adminUrl = process.env.TEST_DATABASE_URL;
    if (!adminUrl) {
      const pgServer = await startEmbeddedPostgres({
        dir: path.join(scratch, 'postgres', 'pgdata'),
        port: await freePort(),
        logger,
      });
      teardown.push(() => pgServer.stop());
      // Over its Unix socket, as the service's own embedded PostgreSQL is reached: every statement of every test
      // (the services in the test processes and their child processes alike) costs less CPU than through loopback
      // TCP.
      adminUrl = pgServer.localUrl('postgres');
    }
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase}`);
    await admin.query(`CREATE DATABASE ${templateDatabase}`);
    await admin.end();
    const templateUrl = new URL(adminUrl);
    templateUrl.pathname = `/${templateDatabase}`;
    const templateDb = createDb(templateUrl.toString(), { poolMax: 1 });
    await migrateLatest(templateDb);
    await templateDb.destroy();
    const url = adminUrl;
    teardown.push(async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${templateDatabase} WITH (FORCE)`).catch(() => undefined);
      await c.end();
    });
    return adminUrl;
  };

  /** The Temporal CLI (found or built) and its dev server, or TEMPORAL_ADDRESS. */
  const startTemporal = async (): Promise<{ cliPath: string; temporalAddress: string }> => {
    const cliPath = (await locateOrBuildTemporalCli(process.env.TEMPORAL_CLI_PATH, logger)) ?? '';
    if (process.env.TEMPORAL_ADDRESS) return { cliPath, temporalAddress: process.env.TEMPORAL_ADDRESS };
    if (!cliPath)
      throw new Error(
        'The tests need the Temporal CLI: install Go, or set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS',
      );
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cliPath },
        ip: '127.0.0.1',
        searchAttributes: [...SEARCH_ATTRIBUTE_KEYS],
        // The settings `npm start` gives its dev server, and what tests of worker versions need: a deployment
        // per test service (each makes its own version current), and a version's drainage checked every second
        // rather than every few minutes.
        extraArgs: [...devServerConfigFlags(), ...TEST_SERVER_FLAGS],
        log: { format: 'pretty', level: 'error' },
      },
    });
    teardown.push(() => env.teardown());
    return { cliPath, temporalAddress: env.address };
  };

  const tearDown = async () => {
    for (const step of teardown.reverse())
      await step().catch((err: unknown) => logger.warn({ err }, 'teardown step failed'));
  };
  // Everything settles before anything is stopped: a failure of one leaves none of the others running behind it.
  const [database, temporal, bundled, assets] = await Promise.allSettled([
    startDatabase(),
    startTemporal(),
    bundling,
    pageAssets,
  ]);
  if (
    database.status === 'rejected' ||
    temporal.status === 'rejected' ||
    bundled.status === 'rejected' ||
    assets.status === 'rejected'
  ) {
    await tearDown();
    const reasons = [database, temporal, bundled, assets].flatMap((r): unknown[] =>
      r.status === 'rejected' ? [r.reason] : [],
    );
    throw reasons[0] instanceof Error ? reasons[0] : new Error(String(reasons[0]));
  }
  const adminUrl = database.value;
  const { cliPath, temporalAddress } = temporal.value;
  const bundle = bundled.value;
  const workflowBundlePath = path.join(scratch, 'workflow-bundle.js');
  await writeFile(workflowBundlePath, bundle.code);
  const bundleCached = await stat(path.join(workflowBundleCache, 'workflow-bundle.json')).then(
    () => true,
    () => false,
  );

  project.provide('pgAdminUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);
  project.provide('temporalAddress', temporalAddress);
  project.provide('temporalCliPath', cliPath);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('workflowBundleCache', bundleCached ? workflowBundleCache : '');
  // The shared DATA_DIR's workers (test/runtime/roles.test.ts) find the bundle there too.
  const dataDir = path.join(scratch, 'data');
  if (bundleCached) await seedWorkflowBundle(workflowBundleCache, dataDir);
  project.provide('dataDir', dataDir);
  project.provide('pageAssetCache', assets.value);
  await seedPageAssets(assets.value, dataDir);

  return tearDown;
}

/**
 * Compresses the approval page's and the API reference's assets as `npm run build` does, once per machine (about
 * 20 s of CPU the first time; in the checkout's node_modules/.cache, or WATHIQ_TEST_CACHE_DIR), so no test's page
 * waits for brotli and no two test files compress the same file.
 * Returns a folder of the run's own holding only this version's forms (the machine's cache keeps every version it
 * ever made): the test services read from it, and test/setup/page-assets-seed.ts copies it into the DATA_DIR of
 * every API process a test starts.
 */
async function warmPageAssets(runDir: string): Promise<string> {
  // Content-addressed and checked on reading, so it may outlive the checkout: .ci/run keeps it outside its fresh
  // clone (WATHIQ_TEST_CACHE_DIR), where every run would otherwise compress every asset again.
  const cacheDir = path.join(
    process.env.WATHIQ_TEST_CACHE_DIR ?? path.resolve('node_modules/.cache/wathiq'),
    'page-assets',
  );
  const assets = createPrecompressedAssets({ cacheDir, readDirs: [] });
  const entries = [
    ...buildAssetCatalog(APPROVAL_ASSETS_BASE, APPROVAL_ASSET_SOURCES).entries.values(),
    ...buildAssetCatalog('', REFERENCE_ASSET_SOURCES).entries.values(),
  ];
  assets.register(entries);
  await assets.warm();
  await mkdir(runDir, { recursive: true });
  for (const entry of entries)
    for (const encoding of ['br', 'gzip'] as const) {
      const name = compressedFileName(entry.sha256, encoding);
      // warm() wrote every form it made to the cache; one it could not write is made by whoever needs it.
      await copyFile(path.join(cacheDir, name), path.join(runDir, name)).catch(() => undefined);
    }
  return runDir;
}

const TEST_SERVER_FLAGS = [
  'matching.maxDeployments=100000',
  'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"',
].flatMap((value) => ['--dynamic-config-value', value]);
