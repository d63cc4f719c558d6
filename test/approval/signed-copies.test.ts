import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  eventually,
  messagesTo,
  PHONES,
  quickRepliesOf,
  requestFor,
  localActivities,
  scheduledActivities,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  templateNameOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import type { RecordedRequest } from '../fakes/fake-graph-api.ts';

/**
 * Once the document is approved, every approver gets the signed PDF over WhatsApp — a template
 * whose DOCUMENT header links to the signed file's permanent public URL — once, in their language.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness();
}, 120_000);
afterAll(() => h.close());

interface HeaderDocument {
  link: string;
  filename: string;
}
const headerDocument = (r: RecordedRequest): HeaderDocument | undefined =>
  (
    r.body as {
      template?: { components?: { type: string; parameters?: { document?: HeaderDocument }[] }[] };
    }
  ).template?.components?.find((c) => c.type === 'header')?.parameters?.[0]?.document;

describe('signed copies', () => {
  it('every approver receives one document message with the signed file’s link and name, in their language', async () => {
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'Sara', phone: PHONES.saudiA, action_type: 'approve_only' },
        { name: 'Tom', phone: PHONES.uk, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    for (const phone of [PHONES.saudiA, PHONES.uk]) {
      const request = await requestFor(h, phone, doc.id, 60_000);
      expect((await tapButton(h, { from: phone, payload: quickRepliesOf(request)[0]! })).status).toBe(200);
    }
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 120_000);
    const download = await h.service.request(`/documents/${doc.id}/download`, { account: h.account });
    const { download_url: link } = ((await download.json()) as { data: { download_url: string } }).data;

    const copiesTo = (phone: string) =>
      messagesTo(h, phone).filter(
        (r) => templateNameOf(r) === 'wathiq_signed_copy' && headerDocument(r)?.link === link,
      );
    for (const [phone, language] of [
      [PHONES.saudiA, 'ar'],
      [PHONES.uk, 'en'],
    ] as const) {
      const [copy] = await eventually(() => copiesTo(phone).length > 0 && copiesTo(phone), 60_000);
      expect(headerDocument(copy!)).toEqual({ link, filename: `${doc.reference}.pdf` });
      expect((copy!.body as { template: { language: { code: string } } }).template.language.code).toBe(
        language,
      );
    }
    // The public link (on PUBLIC_BASE_URL, here the service itself) serves the signed PDF.
    const file = await fetch(`${h.service.api.url}${new URL(link).pathname}`);
    expect(file.status).toBe(200);
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    // The workflow has finished (after the copies): exactly one copy each, recorded in the outbox.
    await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).result();
    expect(copiesTo(PHONES.saudiA)).toHaveLength(1);
    expect(copiesTo(PHONES.uk)).toHaveLength(1);
    const rows = await h.service.database
      .db('whatsapp_messages')
      .where({ document_id: doc.id, direction: 'out', kind: 'signed_copy' });
    expect(rows).toHaveLength(2);
    expect(rows.every((r: { wamid: string | null }) => typeof r.wamid === 'string')).toBe(true);
  }, 300_000);

  it('the copies go out in the finalization’s activity; when WhatsApp fails them for the moment, they are sent again on their own, once each', async () => {
    // Numbers the test before does not message: none of its copies can take the scripted failure.
    const [SARA, TOM] = ['966531232001', '447911123499'];
    const doc = await createDocument(h, {
      workflowType: 'parallel',
      approvers: [
        { name: 'Sara', phone: SARA, action_type: 'approve_only' },
        { name: 'Tom', phone: TOM, action_type: 'approve_only' },
      ],
    });
    expect((await send(h, doc.id)).status).toBe(200);
    const sara = await requestFor(h, SARA, doc.id, 60_000);
    const tom = await requestFor(h, TOM, doc.id, 60_000);
    expect((await tapButton(h, { from: SARA, payload: quickRepliesOf(sara)[0]! })).status).toBe(200);
    // Sara's signed copy fails the first time (a retryable 500).
    h.graph.scriptFor(SARA, { kind: 'raw', status: 500, body: 'outage' });
    expect((await tapButton(h, { from: TOM, payload: quickRepliesOf(tom)[0]! })).status).toBe(200);
    const handle = h.service.temporal.client.workflow.getHandle(`document-${doc.id}`);
    await handle.result();
    expect((await statusOf(h, doc.id)).status).toBe('approved');

    const rows = await h.service.database
      .db('whatsapp_messages')
      .where({ document_id: doc.id, direction: 'out', kind: 'signed_copy' });
    expect(rows).toHaveLength(2);
    expect(rows.every((r: { wamid: string | null }) => typeof r.wamid === 'string')).toBe(true);
    const approved = await h.service.database
      .db('document_events')
      .where({ document_id: doc.id, event: 'document.approved' });
    expect(approved).toHaveLength(1);
    // One local activity finalized and tried the copies (the API wrote the last action); the copies alone were
    // then sent by the ordinary activity sendSignedCopies.
    const finalizing = (await localActivities(h, doc.id)).filter((a) => /finaliz|SignedCopies/i.test(a.name));
    expect(finalizing).toEqual([{ name: 'finalizeAndSendSignedCopies', failed: false }]);
    const scheduled = await scheduledActivities(h, doc.id);
    expect(scheduled.filter((n) => /finaliz|SignedCopies/i.test(n))).toEqual(['sendSignedCopies']);
  }, 300_000);
});
