import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createWhatsAppProvider } from '../../src/whatsapp/create-provider.ts';

const logger = { info: () => undefined };

function configIssues(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

const cloudEnv = {
  WHATSAPP_PROVIDER: 'cloud',
  WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
  WHATSAPP_ACCESS_TOKEN: 'EAAG-token',
  WHATSAPP_APP_SECRET: 'app-secret',
  WHATSAPP_VERIFY_TOKEN: 'verify-token',
};

describe('WhatsApp configuration', () => {
  it('defaults to the console provider and Graph v21.0', () => {
    const { whatsapp } = loadConfig({});
    expect(whatsapp).toMatchObject({
      provider: 'console',
      apiUrl: 'https://graph.facebook.com/v21.0',
      timeoutMs: 10_000,
      templates: {
        approvalRequest: {
          link: 'wathiq_approval_request',
          approve: 'wathiq_approval_request_approve',
          review: 'wathiq_approval_request_review',
        },
        reminder: {
          link: 'wathiq_reminder',
          approve: 'wathiq_reminder_approve',
          review: 'wathiq_reminder_review',
        },
        voided: 'wathiq_document_voided',
        rejected: 'wathiq_document_rejected',
        languages: { ar: 'ar', en: 'en' },
      },
    });
  });

  it('cloud requires the phone number id, the token, the app secret and the verify token, each named', () => {
    const issues = configIssues({ WHATSAPP_PROVIDER: 'cloud' });
    for (const name of [
      'WHATSAPP_PHONE_NUMBER_ID',
      'WHATSAPP_ACCESS_TOKEN',
      'WHATSAPP_APP_SECRET',
      'WHATSAPP_VERIFY_TOKEN',
    ]) {
      expect(
        issues.some((i) => i.startsWith(`${name}:`)),
        name,
      ).toBe(true);
    }
    expect(configIssues(cloudEnv)).toEqual([]);
    expect(loadConfig({ ...cloudEnv, WHATSAPP_API_URL: 'http://127.0.0.1:9/v21.0/' }).whatsapp.apiUrl).toBe(
      'http://127.0.0.1:9/v21.0',
    );
  });

  it('refuses the console provider in production, naming WHATSAPP_PROVIDER', () => {
    // Everything else production asks for (test/runtime/config.unit.test.ts), so only the provider is refused.
    const production = {
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://wathiq.example',
      SIGNING_P12_PATH: '/etc/wathiq/signing.p12',
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
    };
    expect(configIssues(production)).toEqual([expect.stringMatching(/^WHATSAPP_PROVIDER: .*console/)]);
    expect(configIssues({ ...production, ...cloudEnv })).toEqual([]);
  });

  it.each([
    ['WHATSAPP_PROVIDER', 'sms'],
    ['WHATSAPP_API_URL', 'ftp://graph.facebook.com'],
    ['WHATSAPP_PHONE_NUMBER_ID', 'abc'],
    ['WHATSAPP_TIMEOUT_MS', '5'],
    ['WHATSAPP_TEMPLATE_APPROVAL', 'Has Spaces'],
    ['WHATSAPP_TEMPLATE_LANGUAGE_AR', 'arabic'],
  ])('refuses %s=%s and names it', (name, value) => {
    expect(configIssues({ [name]: value }).some((i) => i.startsWith(`${name}:`))).toBe(true);
  });
});

describe('createWhatsAppProvider', () => {
  it('chooses by WHATSAPP_PROVIDER', () => {
    expect(createWhatsAppProvider(loadConfig({}), { logger }).name).toBe('console');
    expect(createWhatsAppProvider(loadConfig(cloudEnv), { logger }).name).toBe('cloud');
  });

  it('refuses console in production even from a hand-made config', () => {
    const config = { ...loadConfig({}), env: 'production' as const };
    expect(() => createWhatsAppProvider(config, { logger })).toThrow(ConfigError);
    expect(() => createWhatsAppProvider(config, { logger })).toThrow(/WHATSAPP_PROVIDER/);
  });

  it('refuses console on a server that listens beyond loopback, even from a hand-made config', () => {
    const base = loadConfig({});
    expect(createWhatsAppProvider({ ...base, http: { ...base.http, host: '::1' } }, { logger }).name).toBe(
      'console',
    );
    for (const host of ['0.0.0.0', '::', '192.0.2.10']) {
      const config = { ...base, http: { ...base.http, host } };
      expect(() => createWhatsAppProvider(config, { logger })).toThrow(ConfigError);
      expect(() => createWhatsAppProvider(config, { logger })).toThrow(/loopback HOST/);
    }
    expect(configIssues({ HOST: '0.0.0.0' }).some((i) => i.startsWith('WHATSAPP_PROVIDER:'))).toBe(true);
    expect(configIssues({ ...cloudEnv, HOST: '0.0.0.0' })).toEqual([]);
  });

  it('refuses cloud without credentials, naming the variables', () => {
    const base = loadConfig({});
    const config = { ...base, whatsapp: { ...base.whatsapp, provider: 'cloud' as const } };
    expect(() => createWhatsAppProvider(config, { logger })).toThrow(
      /WHATSAPP_PHONE_NUMBER_ID[\s\S]*WHATSAPP_ACCESS_TOKEN/,
    );
  });
});
