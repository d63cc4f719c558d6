import type { SecretBox } from '../auth/secret-box.ts';
import type { Db } from '../db/knex.ts';
import {
  openPayload,
  whatsAppMessagesStore,
  type WhatsAppMessage,
} from '../db/stores/whatsapp-messages-store.ts';
import type { MessagePreview } from '../whatsapp/index.ts';

interface StoredPayload {
  preview?: MessagePreview;
  link_token?: string;
}

/** A message Wathiq sent, as the inbox shows it: who to, what kind, its state, and what the phone would show. */
export type OutboxMessage = Pick<
  WhatsAppMessage,
  'id' | 'wamid' | 'phone' | 'kind' | 'status' | 'createdAt'
> & {
  preview?: MessagePreview;
};

interface OutboxDeps {
  db: Db;
  secrets: SecretBox;
}

const toOutboxMessage = (m: WhatsAppMessage, secrets: SecretBox): OutboxMessage => {
  const payload = (openPayload(m, secrets) ?? {}) as StoredPayload;
  const { id, wamid, phone, kind, status, createdAt } = m;
  return { id, wamid, phone, kind, status, createdAt, ...(payload.preview && { preview: payload.preview }) };
};

/** The newest messages sent, newest first, their payloads opened. */
export async function listOutbox(deps: OutboxDeps, limit: number): Promise<OutboxMessage[]> {
  const messages = await whatsAppMessagesStore(deps.db).listOutbox({ limit });
  return messages.map((m) => toOutboxMessage(m, deps.secrets));
}

/** One message sent, by its id; undefined when there is none (or it was received, not sent). */
export async function findOutboxMessage(deps: OutboxDeps, id: number): Promise<OutboxMessage | undefined> {
  const [message] = (await whatsAppMessagesStore(deps.db).listOutbox({ limit: 1, beforeId: id + 1 })).filter(
    (m) => m.id === id,
  );
  return message && toOutboxMessage(message, deps.secrets);
}
