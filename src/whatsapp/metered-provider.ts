import { performance } from 'node:perf_hooks';
import type { WhatsAppMetrics } from '../metrics/metrics.ts';
import { templateNameFor } from './templates.ts';
import { isWhatsAppSendError, type WhatsAppProvider, type WhatsAppTemplateConfig } from './types.ts';

/**
 * `provider`, with every send counted by template name (from config, so a bounded label): accepted or failed, how
 * long the call took, and a failure's reason class (`graph_error`, `http_error`, `network`, `timeout`,
 * `invalid_response`; anything else thrown is `network`, as sendNotice records it).
 */
export function meteredProvider(
  provider: WhatsAppProvider,
  metrics: WhatsAppMetrics,
  templates: WhatsAppTemplateConfig,
): WhatsAppProvider {
  return {
    name: provider.name,
    async send(notice) {
      const template = templateNameFor(notice, templates);
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const answer = await provider.send(notice);
        metrics.sent(template, 'accepted', seconds());
        return answer;
      } catch (err) {
        metrics.sent(template, 'failed', seconds());
        if (isWhatsAppSendError(err)) metrics.failed(template, err.reason, err.retryable);
        else metrics.failed(template, 'network', true);
        throw err;
      }
    },
  };
}

/** Every template name the config can send, for series that start at 0. */
export function templateNames(templates: WhatsAppTemplateConfig): string[] {
  const variants = (v: WhatsAppTemplateConfig['reminder']) => [v.link, v.approve, v.review];
  return [
    ...variants(templates.approvalRequest),
    ...variants(templates.reminder),
    templates.voided,
    templates.rejected,
  ];
}
