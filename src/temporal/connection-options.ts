import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError, type TemporalTlsSettings } from '../config.ts';

/** What both kinds of connection (the client's and the worker's native one) take to reach a cluster. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

export interface TemporalConnectionSettings {
  address: string;
  tls: TemporalTlsSettings;
  apiKey?: string;
}

/**
 * Reads the TLS files once, at start-up, so a missing or unreadable one stops the process naming its variable
 * instead of failing every connection later. Plain connections (the dev server, a cluster on a private network)
 * get no TLS; an API key always travels over TLS (Temporal Cloud).
 */
export function temporalConnectionOptions(settings: TemporalConnectionSettings): TemporalConnectionOptions {
  const { tls } = settings;
  if (!tls.enabled) return { address: settings.address };
  const read = (variable: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError([
        `${variable}: ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      ]);
    }
  };
  const config: TLSConfig = {};
  if (tls.caPath) config.serverRootCACertificate = read('TEMPORAL_TLS_CA_PATH', tls.caPath);
  if (tls.certPath && tls.keyPath) {
    config.clientCertPair = {
      crt: read('TEMPORAL_TLS_CERT_PATH', tls.certPath),
      key: read('TEMPORAL_TLS_KEY_PATH', tls.keyPath),
    };
  }
  if (tls.serverName) config.serverNameOverride = tls.serverName;
  return { address: settings.address, tls: config, ...(settings.apiKey ? { apiKey: settings.apiKey } : {}) };
}
