import type { ActivityDeps } from '../activities/index.ts';
import type { Config } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import { createWhatsAppProvider, type WhatsAppProvider } from '../whatsapp/index.ts';

/** Everything the worker's activities need, built from config: one place for main, tests and benchmarks. */
export function createWorkerDeps(
  config: Config,
  db: Knex,
  logger: Logger,
  overrides: { whatsappProvider?: WhatsAppProvider } = {},
): ActivityDeps {
  return {
    db,
    logger,
    whatsapp: {
      provider: overrides.whatsappProvider ?? createWhatsAppProvider(config, { logger }),
      templates: config.whatsapp.templates,
    },
  };
}
