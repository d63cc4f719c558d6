import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../src/runtime/temporal-dev-server.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/temporal/search-attributes.ts';
import {
  ensureTemporalServerBuild,
  startProductionTemporal,
  TEMPORAL_SERVER_VERSION,
  type ProductionTemporal,
} from '../helpers/production-temporal.ts';

/**
 * The production-shaped Temporal the fault tests and `bench:lifecycle --temporal production` run on is what it
 * claims: the server version of the CLI's dev server, PostgreSQL persistence, 4 history shards, the namespace with
 * Wathiq's search attributes, and the settings of deploy/temporal/dynamic-config.yaml read back from the server
 * itself. Its set-up scripts are compose's admin-tools jobs, and they can run again on a set-up cluster.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType

describe('the production-shaped Temporal server', () => {
  let dir: string;
  let server: ProductionTemporal;
  let connection: Connection;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-production-temporal-'));
    await chmod(dir, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
    server = await startProductionTemporal({ dir, cliPath: inject('temporalCliPath') });
    connection = await Connection.connect({ address: server.address });
  }, 600_000);

  afterAll(async () => {
    await connection?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the dev server’s version with PostgreSQL persistence and 4 history shards', async () => {
    const { stdout } = await run(inject('temporalCliPath'), ['--version']);
    expect(stdout).toContain(`(Server ${TEMPORAL_SERVER_VERSION},`);
    const info = await connection.workflowService.getClusterInfo({});
    expect({
      serverVersion: info.serverVersion,
      historyShardCount: info.historyShardCount,
      persistenceStore: info.persistenceStore,
      visibilityStore: info.visibilityStore,
    }).toEqual({
      serverVersion: TEMPORAL_SERVER_VERSION,
      historyShardCount: 4,
      persistenceStore: 'postgres12',
      visibilityStore: 'postgres12',
    });
  });

  it('has the namespace default with every search attribute the workflows set, as Keyword', async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: 'default',
    });
    for (const key of SEARCH_ATTRIBUTE_KEYS)
      expect({ [key.name]: customAttributes?.[key.name] }).toEqual({ [key.name]: KEYWORD });
  });

  it('loaded each setting of deploy/temporal/dynamic-config.yaml, as the server’s own log says', async () => {
    // The file-based dynamic config client logs each value it takes, with its key in lower case, and warns of an
    // unknown key or a value of the wrong type.
    const log = server.output();
    for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG)) {
      expect(log).toMatch(
        new RegExp(
          `dynamic config changed for the key: ${key.toLowerCase().replace(/\./g, '\\.')} oldValue: nil newValue: .*value: ${value}\\b`,
        ),
      );
    }
    expect(log).not.toMatch(/dynamic config (warning|error)/);
    // And the server's validator (known keys, right types) has nothing to say about the file.
    const { server: binary } = await ensureTemporalServerBuild();
    const file = path.join(ROOT, 'deploy/temporal/dynamic-config.yaml');
    const { stdout, stderr } = await run(binary, ['validate-dynamic-config', file]);
    expect(`${stdout}${stderr}`.trim()).toBe(file);
  });

  it('takes compose’s schema and namespace jobs again without a change', async () => {
    expect(await server.setupSchema()).toMatch(/temporal_visibility is at the visibility schema/);
    expect(await server.setupNamespace()).toMatch(/namespace default with search attributes/);
    const info = await connection.workflowService.getClusterInfo({});
    expect(info.historyShardCount).toBe(4);
  }, 120_000);
});
