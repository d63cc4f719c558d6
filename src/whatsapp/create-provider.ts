import type { Dispatcher } from 'undici';
import { ConfigError, devToolsAllowed, type Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createCloudProvider } from './cloud-provider.ts';
import { createConsoleProvider, type ConsoleMessage } from './console-provider.ts';
import type { WhatsAppProvider } from './types.ts';

export interface WhatsAppProviderDeps {
  logger: Pick<Logger, 'info'>;
  dispatcher?: Dispatcher;
  /** Console provider only: see ConsoleProviderOptions.record. */
  record?: (message: ConsoleMessage) => void | Promise<void>;
}

/**
 * Picks the provider named by WHATSAPP_PROVIDER; `console` is refused in production (docs/product-rules.md §5)
 * and on a server that listens beyond loopback (its messages, approval links included, are read at /dev/inbox).
 */
export function createWhatsAppProvider(
  config: Pick<Config, 'env' | 'whatsapp'> & { http: Pick<Config['http'], 'publicBaseUrl' | 'host'> },
  deps: WhatsAppProviderDeps,
): WhatsAppProvider {
  const w = config.whatsapp;
  if (w.provider === 'console') {
    if (config.env === 'production') {
      throw new ConfigError(['WHATSAPP_PROVIDER: console is for development; set WHATSAPP_PROVIDER=cloud']);
    }
    if (!devToolsAllowed(config)) {
      throw new ConfigError([
        `WHATSAPP_PROVIDER: console needs a loopback HOST (127.0.0.1, ::1, localhost), not ${config.http.host}`,
      ]);
    }
    return createConsoleProvider({
      logger: deps.logger,
      templates: w.templates,
      publicBaseUrl: config.http.publicBaseUrl,
      ...(deps.record && { record: deps.record }),
    });
  }
  const missing = [
    ['WHATSAPP_PHONE_NUMBER_ID', w.phoneNumberId],
    ['WHATSAPP_ACCESS_TOKEN', w.accessToken],
  ].filter(([, v]) => !v);
  if (missing.length > 0 || !w.phoneNumberId || !w.accessToken) {
    throw new ConfigError(missing.map(([name]) => `${name}: required when WHATSAPP_PROVIDER=cloud`));
  }
  return createCloudProvider({
    apiUrl: w.apiUrl,
    phoneNumberId: w.phoneNumberId,
    accessToken: w.accessToken,
    timeoutMs: w.timeoutMs,
    templates: w.templates,
    ...(deps.dispatcher && { dispatcher: deps.dispatcher }),
  });
}
