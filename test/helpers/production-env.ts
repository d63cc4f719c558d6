/** A production configuration that starts: https public URL, the cloud provider, a real certificate, a key. */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://wathiq.example',
  WHATSAPP_PROVIDER: 'cloud',
  WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
  WHATSAPP_ACCESS_TOKEN: 'token',
  WHATSAPP_APP_SECRET: 'secret',
  WHATSAPP_VERIFY_TOKEN: 'verify',
  SIGNING_P12_PATH: '/etc/wathiq/signing.p12',
  SIGNING_P12_PASSWORD: 'export password',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
};
