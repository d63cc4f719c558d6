/** The WhatsApp layer's public surface (docs/product-rules.md §5). */
export * from './types.ts';
export {
  buildTemplateMessage,
  buttonPayload,
  CC_GREETING,
  languageFor,
  renderPreview,
  templateNameFor,
  type GraphTemplateMessage,
  type MessagePreview,
  type PreviewButton,
} from './templates.ts';
export { GRAPH_ERROR_CODES, isRetryableGraphFailure } from './graph-errors.ts';
export { createCloudProvider, type CloudProviderOptions } from './cloud-provider.ts';
export {
  createConsoleProvider,
  type ConsoleMessage,
  type ConsoleProviderOptions,
} from './console-provider.ts';
export { createWhatsAppProvider, type WhatsAppProviderDeps } from './create-provider.ts';
export {
  parseButtonPayload,
  parseNotification,
  signMetaPayload,
  verifyHandshake,
  verifyMetaSignature,
  type ButtonPayload,
  type DeliveryStatus,
  type InboundReply,
  type InboundStatus,
  type ParsedNotification,
} from './inbound.ts';
export {
  sendNotice,
  type NoticeLogger,
  type ProviderAnswerMemory,
  type SendNoticeDeps,
  type SendNoticeResult,
} from './send-notice.ts';
export { DEFAULT_RECORD_RETRY, retryDelays, withRetries } from './record-retry.ts';
export { meteredProvider, templateNames } from './metered-provider.ts';
