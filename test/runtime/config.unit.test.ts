import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { PRODUCTION_ENV } from '../helpers/production-env.ts';

const PRODUCTION = PRODUCTION_ENV;

function issuesOf(env: Record<string, string | undefined>, role?: 'all' | 'api' | 'worker'): string[] {
  try {
    loadConfig(env, { role });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

describe('loadConfig', () => {
  it('runs on defaults with nothing configured', () => {
    const config = loadConfig({});
    expect(config.http.port).toBe(3000);
    expect(config.http.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.database.url).toBeUndefined();
    expect(config.temporal.address).toBeUndefined();
    expect(config.temporal.taskQueue).toBe('document-approval');
    expect(config.rateLimit.store).toBe('memory');
    expect(config.plans.basic.requestsPerMinute).toBe(100);
    expect(config.plans.business.requestsPerMinute).toBe(300);
    expect(config.plans.enterprise.requestsPerMinute).toBe(1000);
    expect(config.plans.basic.maxUploadBytes).toBe(20 * 1024 * 1024);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['RATE_LIMIT_STORE', 'redis'],
    ['NODE_ENV', 'staging'],
    ['PUBLIC_BASE_URL', 'not a url'],
    ['MAX_UPLOAD_MB_BASIC', '-1'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '-1'],
    ['TRUST_PROXY', '11'],
    ['TRUST_PROXY', '1.5'],
  ])('refuses %s=%s and names the variable', (name, value) => {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).message).toContain(name);
  });

  it('names the worker deployment and how a new version is promoted, refusing names Temporal would refuse', () => {
    expect(loadConfig({}).temporal).toMatchObject({ deploymentName: 'wathiq', versionPromotion: 'auto' });
    expect(
      loadConfig({ TEMPORAL_DEPLOYMENT_NAME: 'acme-prod', WORKER_VERSION_PROMOTION: 'manual' }).temporal,
    ).toMatchObject({ deploymentName: 'acme-prod', versionPromotion: 'manual' });
    // A colon separates the deployment from the build id in Temporal's version strings.
    for (const bad of ['a:b', 'with space', 'x'.repeat(256), '__proto__:x'])
      expect(issuesOf({ TEMPORAL_DEPLOYMENT_NAME: bad }).join('\n'), bad).toMatch(/TEMPORAL_DEPLOYMENT_NAME/);
    for (const bad of ['always', 'AUTO', '__proto__'])
      expect(issuesOf({ WORKER_VERSION_PROMOTION: bad }).join('\n'), bad).toMatch(/WORKER_VERSION_PROMOTION/);
  });

  it('has the reminder, sign-in delay and purge limits of the README by default', () => {
    const config = loadConfig({});
    expect(config.reminders).toEqual({ cooldownMs: 60 * 60_000, maxPerApprover: 5 });
    expect(config.login).toEqual({
      freeFailures: { email: 3, ip: 20, code: 5 },
      baseDelayMs: 1000,
      maxDelayMs: 60_000,
      windowMs: 15 * 60_000,
    });
    expect(config.purge).toEqual({ intervalMs: 60 * 60_000, batchSize: 1000, maxBatches: 100 });
    expect(config.approvalAnswerTimeoutMs).toBe(20_000);
    expect(loadConfig({ APPROVAL_ANSWER_TIMEOUT_SECONDS: '3' }).approvalAnswerTimeoutMs).toBe(3000);
    // A worker killed mid-finalization is noticed after 30 s unless a test asks for less.
    expect(config.approvalPolicies.finalizeHeartbeatMs).toBe(30_000);
    expect(
      loadConfig({ APPROVAL_FINALIZE_HEARTBEAT_SECONDS: '5' }).approvalPolicies.finalizeHeartbeatMs,
    ).toBe(5000);
    // … and a worker killed mid-page of a bulk send, the same.
    expect(config.bulkSends.heartbeatMs).toBe(30_000);
    expect(loadConfig({ BULK_SEND_HEARTBEAT_SECONDS: '5' }).bulkSends.heartbeatMs).toBe(5000);
    // SIGTERM's whole shutdown, under Kubernetes' default grace period of 30 s.
    expect(config.shutdownTimeoutMs).toBe(25_000);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '5' }).shutdownTimeoutMs).toBe(5000);
  });

  it.each([
    ['REMIND_COOLDOWN_MINUTES', '-1'],
    ['REMIND_MAX_PER_APPROVER', '0'],
    ['REMIND_MAX_PER_APPROVER', '101'],
    ['LOGIN_DELAY_AFTER_FAILURES_EMAIL', '0'],
    ['LOGIN_DELAY_AFTER_FAILURES_CODE', '0'],
    ['LOGIN_DELAY_AFTER_FAILURES_CODE', '101'],
    ['LOGIN_DELAY_MAX_SECONDS', '3601'],
    ['PURGE_INTERVAL_MINUTES', '0'],
    ['PURGE_BATCH_SIZE', '100001'],
    ['APPROVAL_ANSWER_TIMEOUT_SECONDS', '0'],
    ['APPROVAL_ANSWER_TIMEOUT_SECONDS', '301'],
    ['APPROVAL_ANSWER_TIMEOUT_SECONDS', '2.5'],
    // Under 3 s, a live attempt on a loaded machine could miss its heartbeats and be given up.
    ['APPROVAL_FINALIZE_HEARTBEAT_SECONDS', '2'],
    ['APPROVAL_FINALIZE_HEARTBEAT_SECONDS', '301'],
    ['APPROVAL_FINALIZE_HEARTBEAT_SECONDS', '__proto__'],
    ['APPROVAL_FINALIZE_HEARTBEAT_SECONDS', '9'.repeat(10_000)],
    ['BULK_SEND_HEARTBEAT_SECONDS', '2'],
    ['BULK_SEND_HEARTBEAT_SECONDS', '301'],
    ['BULK_SEND_HEARTBEAT_SECONDS', '4.5'],
    ['BULK_SEND_HEARTBEAT_SECONDS', '__proto__'],
    ['BULK_SEND_HEARTBEAT_SECONDS', '9'.repeat(10_000)],
    // Under 5 s an activity gets under 2.5 s to finish; over an hour is no bound an orchestrator would wait for.
    ['SHUTDOWN_TIMEOUT_SECONDS', '4'],
    ['SHUTDOWN_TIMEOUT_SECONDS', '3601'],
    ['SHUTDOWN_TIMEOUT_SECONDS', '2.5'],
    ['SHUTDOWN_TIMEOUT_SECONDS', '__proto__'],
    ['SHUTDOWN_TIMEOUT_SECONDS', '9'.repeat(10_000)],
    // A wait longer than the failure window would be forgotten before it ends.
    ['LOGIN_FAILURE_WINDOW_MINUTES', '0.5'],
  ])('refuses %s=%s and names the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('treats empty strings as unset and trims the base URL', () => {
    const config = loadConfig({ DATABASE_URL: '', PUBLIC_BASE_URL: 'https://wathiq.example/' });
    expect(config.database.url).toBeUndefined();
    expect(config.http.publicBaseUrl).toBe('https://wathiq.example');
  });

  it('reads TRUST_PROXY as a number of proxy hops; false and true (the old switch) mean 0 and 1', () => {
    expect(loadConfig({}).http.proxyHops).toBe(0);
    for (const [value, hops] of [
      ['0', 0],
      ['1', 1],
      ['2', 2],
      ['10', 10],
      ['false', 0],
      ['true', 1],
    ] as const) {
      expect(loadConfig({ TRUST_PROXY: value }).http.proxyHops, value).toBe(hops);
    }
  });

  it('listens on 127.0.0.1 unless told otherwise, and on 0.0.0.0 by default in production', () => {
    expect(loadConfig({}).http.host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'test' }).http.host).toBe('127.0.0.1');
    const production = PRODUCTION;
    expect(loadConfig(production).http.host).toBe('0.0.0.0');
    expect(loadConfig({ ...production, HOST: '10.0.0.5' }).http.host).toBe('10.0.0.5');
    // A development server others can reach is fine, without the console provider.
    expect(loadConfig({ ...production, NODE_ENV: 'development', HOST: '0.0.0.0' }).http.host).toBe('0.0.0.0');
  });

  describe('in production (NODE_ENV=production) refuses what is unsafe, naming the variable', () => {
    it('starts with an https public URL, the cloud provider, an app secret and a real certificate', () => {
      expect(issuesOf(PRODUCTION)).toEqual([]);
      const config = loadConfig(PRODUCTION);
      expect(config.env).toBe('production');
      expect(config.http.publicBaseUrl).toBe('https://wathiq.example');
      expect(config.webhooks.allowPrivate).toBe(false);
      expect(config.signing.p12Path).toBe('/etc/wathiq/signing.p12');
    });

    it.each([['http://wathiq.example'], ['http://127.0.0.1:3000'], ['ftp://wathiq.example'], [undefined]])(
      'PUBLIC_BASE_URL=%s (not https)',
      (url) => {
        expect(issuesOf({ ...PRODUCTION, PUBLIC_BASE_URL: url })).toEqual([
          expect.stringMatching(/^PUBLIC_BASE_URL: must be an https URL/),
        ]);
        // The same value is fine outside production.
        expect(issuesOf({ ...PRODUCTION, NODE_ENV: 'test', PUBLIC_BASE_URL: url })).toEqual([]);
      },
    );

    it('WEBHOOK_ALLOW_PRIVATE=true', () => {
      for (const value of ['true', '1']) {
        expect(issuesOf({ ...PRODUCTION, WEBHOOK_ALLOW_PRIVATE: value })).toEqual([
          expect.stringMatching(/^WEBHOOK_ALLOW_PRIVATE: /),
        ]);
      }
      expect(issuesOf({ ...PRODUCTION, WEBHOOK_ALLOW_PRIVATE: 'false' })).toEqual([]);
      expect(issuesOf({ ...PRODUCTION, NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE: 'true' })).toEqual([]);
    });

    it('the console WhatsApp provider', () => {
      expect(issuesOf({ ...PRODUCTION, WHATSAPP_PROVIDER: 'console' })).toEqual([
        expect.stringMatching(/^WHATSAPP_PROVIDER: console is for development/),
      ]);
    });

    it('the development certificate: no SIGNING_P12_PATH, or the path of the development one', () => {
      expect(issuesOf({ ...PRODUCTION, SIGNING_P12_PATH: undefined })).toEqual([
        expect.stringMatching(/^SIGNING_P12_PATH: required when NODE_ENV=production/),
      ]);
      const dataDir = '/var/lib/wathiq';
      const devCert = path.join(dataDir, 'signing', 'dev-signing-certificate.p12');
      expect(issuesOf({ ...PRODUCTION, DATA_DIR: dataDir, SIGNING_P12_PATH: devCert })).toEqual([
        expect.stringMatching(/^SIGNING_P12_PATH: .* is the development certificate/),
      ]);
      // Only the processes that sign need a certificate: the API role (and the CLI) signs nothing.
      expect(issuesOf({ ...PRODUCTION, SIGNING_P12_PATH: undefined }, 'api')).toEqual([]);
      expect(issuesOf({ ...PRODUCTION, SIGNING_P12_PATH: undefined }, 'worker')).toHaveLength(1);
      // Outside production the development certificate is the default.
      expect(issuesOf({ ...PRODUCTION, NODE_ENV: 'development', SIGNING_P12_PATH: undefined })).toEqual([]);
    });

    it('an HSM or a CSC service instead of a PKCS#12: what each needs, named', () => {
      const hsm = { ...PRODUCTION, SIGNING_P12_PATH: undefined, SIGNER: 'pkcs11' };
      expect(issuesOf(hsm)).toEqual([
        expect.stringMatching(/^SIGNING_PKCS11_MODULE: required when SIGNER=pkcs11/),
        expect.stringMatching(/^SIGNING_PKCS11_PIN: required when SIGNER=pkcs11, or SIGNING_PKCS11_PIN_FILE/),
      ]);
      const module = '/usr/lib/softhsm/libsofthsm2.so';
      expect(
        issuesOf({ ...hsm, SIGNING_PKCS11_MODULE: module, SIGNING_PKCS11_PIN_FILE: '/run/pin' }),
      ).toEqual([]);
      expect(
        issuesOf({
          ...hsm,
          SIGNING_PKCS11_MODULE: module,
          SIGNING_PKCS11_PIN: '1',
          SIGNING_PKCS11_KEY_ID: 'x1',
        }),
      ).toEqual([expect.stringMatching(/^SIGNING_PKCS11_KEY_ID: /)]);
      const csc = { ...PRODUCTION, SIGNING_P12_PATH: undefined, SIGNER: 'csc' };
      expect(issuesOf(csc)).toEqual([
        expect.stringMatching(/^SIGNING_CSC_URL: required when SIGNER=csc/),
        expect.stringMatching(/^SIGNING_CSC_TOKEN: required when SIGNER=csc/),
      ]);
      expect(
        issuesOf({ ...csc, SIGNING_CSC_URL: 'http://rss.example/csc/v2', SIGNING_CSC_TOKEN: 't' }),
      ).toEqual([expect.stringMatching(/^SIGNING_CSC_URL: must be an https URL when NODE_ENV=production/)]);
      expect(
        issuesOf({ ...csc, SIGNING_CSC_URL: 'https://rss.example/csc/v2', SIGNING_CSC_TOKEN: 't' }),
      ).toEqual([]);
      expect(
        issuesOf({ ...csc, SIGNING_CSC_URL: 'https://rss.example/csc/v2', SIGNING_CSC_TOKEN: 't' }, 'api'),
      ).toEqual([]);
      const config = loadConfig({
        ...csc,
        SIGNING_CSC_URL: 'https://rss.example/csc/v2',
        SIGNING_CSC_TOKEN: 't',
      });
      expect(config.signing).toMatchObject({
        kind: 'csc',
        csc: {
          baseUrl: 'https://rss.example/csc/v2',
          token: 't',
          timeoutMs: 10_000,
          retries: 3,
          retryBackoffMs: 500,
        },
      });
    });

    it.each([[''], ['   '], [undefined]])('an empty WHATSAPP_APP_SECRET (%j)', (secret) => {
      expect(issuesOf({ ...PRODUCTION, WHATSAPP_APP_SECRET: secret })).toEqual([
        expect.stringMatching(/^WHATSAPP_APP_SECRET: required/),
      ]);
    });

    it('lists every refusal at once', () => {
      const issues = issuesOf({
        NODE_ENV: 'production',
        PUBLIC_BASE_URL: 'http://wathiq.example',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      });
      for (const name of [
        'WHATSAPP_PROVIDER',
        'PUBLIC_BASE_URL',
        'WEBHOOK_ALLOW_PRIVATE',
        'SIGNING_P12_PATH',
      ]) {
        expect(
          issues.some((i) => i.startsWith(`${name}:`)),
          name,
        ).toBe(true);
      }
    });
  });
});
