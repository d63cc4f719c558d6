import { z } from 'zod';
import { bool, httpUrl, optionalString, port } from './fields.ts';
import { defineSlice } from './slice.ts';

export interface TemporalTlsSettings {
  enabled: boolean;
  caPath?: string;
  certPath?: string;
  keyPath?: string;
  serverName?: string;
}

export interface TemporalConfig {
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    /** The Worker Deployment every worker of this service joins, its version named by the workflow code. */
    deploymentName: string;
    /**
     * `auto`: a worker makes its version current when it starts, if that version never was (a new deploy); a
     * restarted worker of an older version never takes it back. `manual`: an operator does (`workers promote`).
     */
    versionPromotion: 'auto' | 'manual';
    cliPath?: string;
    devPort: number;
    uiPort: number;
    /** The Temporal Web UI operators open (`npx wathiq documents show` links a document's workflow there). */
    uiUrl?: string;
    /** How to reach a configured cluster: TLS files are read when connecting (see temporal/connection-options). */
    tls: TemporalTlsSettings;
    apiKey?: string;
  };
}

export const temporalSlice = defineSlice({
  title: 'Temporal',
  about:
    "Unset TEMPORAL_ADDRESS: a Temporal dev server (the `temporal` CLI) with its Web UI, state under DATA_DIR/temporal. A cluster behind TLS: mTLS (self-hosted) with a CA and a client certificate, or Temporal Cloud with an API key. Any of TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_CERT_PATH and TEMPORAL_API_KEY turns TLS on; TEMPORAL_TLS=true alone means TLS with the system's trusted roots.",
  env: {
    TEMPORAL_ADDRESS: optionalString.describe(
      'a Temporal frontend (host:7233) to use instead of the dev server',
    ),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default').describe('the Temporal namespace'),
    TEMPORAL_TASK_QUEUE: z
      .string()
      .min(1)
      .default('document-approval')
      .describe('the task queue of the workflows and activities'),
    // Temporal's own limits on a deployment name: at most 255 characters, and no ':' (it separates the build id).
    TEMPORAL_DEPLOYMENT_NAME: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^:\s]+$/, 'no colon and no whitespace')
      .default('wathiq')
      .describe(
        'the Worker Deployment every worker joins; each version is named by its workflow code (docs/operations.md, "Upgrading workflow code")',
      ),
    WORKER_VERSION_PROMOTION: z
      .enum(['auto', 'manual'])
      .default('auto')
      .describe(
        'auto: a new worker version becomes current when its worker starts; manual: `npm run cli -- workers promote` (npm start always promotes)',
      ),
    TEMPORAL_CLI_PATH: optionalString.describe('a `temporal` binary to use for the dev server'),
    TEMPORAL_DEV_PORT: port.default(7233).describe('the port of the dev server'),
    TEMPORAL_UI_PORT: port.default(8233).describe("the port of the dev server's Web UI"),
    TEMPORAL_UI_URL: httpUrl()
      .optional()
      .describe('the Temporal Web UI `npx wathiq documents show` links a workflow to'),
    TEMPORAL_TLS: bool
      .optional()
      .describe('true: TLS to the cluster (with the system roots unless a CA is given); false: plain'),
    TEMPORAL_TLS_CA_PATH: optionalString.describe("PEM of the CA that signed the cluster's certificate"),
    TEMPORAL_TLS_CERT_PATH: optionalString.describe(
      "PEM client certificate of this process's role (mTLS), with TEMPORAL_TLS_KEY_PATH",
    ),
    TEMPORAL_TLS_KEY_PATH: optionalString.describe('PEM key of that client certificate'),
    TEMPORAL_TLS_SERVER_NAME: optionalString.describe(
      "the name the cluster's certificate carries, if not the address's host",
    ),
    TEMPORAL_API_KEY: optionalString.describe('a Temporal Cloud API key (secret; over TLS)'),
  },
  derivedDefaults: {
    TEMPORAL_ADDRESS: 'the dev server',
    TEMPORAL_UI_URL: "the dev server's UI when TEMPORAL_ADDRESS is unset",
    TEMPORAL_TLS: 'plain, unless a CA, a client certificate or an API key is set',
  },
  checks: {
    // A client certificate needs its key and the other way round; TLS files mean nothing with TLS switched off.
    'temporal-tls': (e) => {
      const issues: string[] = [];
      if (Boolean(e.TEMPORAL_TLS_CERT_PATH) !== Boolean(e.TEMPORAL_TLS_KEY_PATH)) {
        issues.push(
          'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH: set both (the client certificate and its key) or neither',
        );
      }
      if (e.TEMPORAL_TLS === false) {
        const set = (['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_API_KEY'] as const).filter(
          (k) => e[k] !== undefined,
        );
        if (set.length > 0) issues.push(`TEMPORAL_TLS: is false, but ${set.join(' and ')} need TLS`);
      }
      return issues;
    },
  },
  build: (e): TemporalConfig => ({
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      deploymentName: e.TEMPORAL_DEPLOYMENT_NAME,
      versionPromotion: e.WORKER_VERSION_PROMOTION,
      cliPath: e.TEMPORAL_CLI_PATH,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      // Without a cluster address the dev server runs here, and its UI with it.
      uiUrl: (
        e.TEMPORAL_UI_URL ?? (e.TEMPORAL_ADDRESS ? undefined : `http://127.0.0.1:${e.TEMPORAL_UI_PORT}`)
      )?.replace(/\/+$/, ''),
      tls: {
        // An API key or any TLS file means TLS; TEMPORAL_TLS=true alone means TLS with the system's roots.
        enabled:
          e.TEMPORAL_TLS ?? Boolean(e.TEMPORAL_API_KEY ?? e.TEMPORAL_TLS_CA_PATH ?? e.TEMPORAL_TLS_CERT_PATH),
        caPath: e.TEMPORAL_TLS_CA_PATH,
        certPath: e.TEMPORAL_TLS_CERT_PATH,
        keyPath: e.TEMPORAL_TLS_KEY_PATH,
        serverName: e.TEMPORAL_TLS_SERVER_NAME,
      },
      apiKey: e.TEMPORAL_API_KEY,
    },
  }),
});
