import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudProvider } from '../../src/whatsapp/cloud-provider.ts';
import { buildTemplateMessage, documentFilename, renderPreview } from '../../src/whatsapp/templates.ts';
import { WhatsAppSendError, type WhatsAppProvider } from '../../src/whatsapp/types.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { notice, templates } from '../helpers/whatsapp-fixtures.ts';

/**
 * Signed copies, the WhatsApp side: the signed copy is a template message whose DOCUMENT header carries the signed
 * PDF by link (Meta fetches it), so it reaches recipients outside the 24-hour customer service window too.
 */
const document = { link: 'https://wathiq.example/v/abc123/signed.pdf', filename: 'WQT-2026-000042.pdf' };

describe('the signed copy message', () => {
  it('is the signed-copy template with the PDF as its document header, in the recipient’s language', () => {
    for (const language of ['ar', 'en'] as const) {
      const n = notice({ kind: 'signed_copy', language, document });
      expect(buildTemplateMessage(n, templates)).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '966501234567',
        type: 'template',
        template: {
          name: 'wathiq_signed_copy',
          language: { code: language },
          components: [
            { type: 'header', parameters: [{ type: 'document', document }] },
            {
              type: 'body',
              parameters: [n.approverName, n.documentTitle, n.reference].map((text) => ({
                type: 'text',
                text,
              })),
            },
          ],
        },
      });
    }
    expect(renderPreview(notice({ kind: 'signed_copy', language: 'en', document })).text).toContain(
      'Your signed copy is attached',
    );
    expect(renderPreview(notice({ kind: 'signed_copy', language: 'ar', document })).text).toContain(
      'نسختك الموقّعة',
    );
  });

  it('cannot be built without the document', () => {
    expect(() => buildTemplateMessage(notice({ kind: 'signed_copy' }), templates)).toThrow(/signed document/);
  });

  it('gets a file name with no path, no control characters, bounded, ending in .pdf', () => {
    expect(documentFilename('WQT-2026-000042.pdf')).toBe('WQT-2026-000042.pdf');
    expect(documentFilename('عقد توريد')).toBe('عقد توريد.pdf');
    expect(documentFilename('../../etc/passwd')).toBe('.. .. etc passwd.pdf');
    expect(documentFilename('a\u0000b\r\nc.PDF')).toBe('a b c.pdf');
    expect(documentFilename('  ')).toBe('document.pdf');
    const long = documentFilename('ع'.repeat(500));
    expect([...long]).toHaveLength(200);
    expect(long.endsWith('.pdf')).toBe(true);
  });
});

describe('the fake Graph API and document messages', () => {
  let fake: FakeGraphApi;
  let provider: WhatsAppProvider;
  beforeAll(async () => {
    fake = await startFakeGraphApi();
    provider = createCloudProvider({
      apiUrl: fake.apiUrl,
      phoneNumberId: fake.phoneNumberId,
      accessToken: fake.accessToken,
      timeoutMs: 2_000,
      templates,
    });
  });
  afterAll(() => fake.close());

  it('accepts a template with a document header by link, and refuses one without an http(s) link', async () => {
    const n = notice({ kind: 'signed_copy', document });
    const { wamid } = await provider.send(n);
    expect(fake.requests.at(-1)).toMatchObject({ wamid, body: buildTemplateMessage(n, templates) });

    const insecure = notice({
      kind: 'signed_copy',
      document: { ...document, link: 'file:///etc/passwd' },
    });
    const err = await provider.send(insecure).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WhatsAppSendError);
    expect((err as WhatsAppSendError).retryable).toBe(false);
  });

  it('accepts a plain document message by link or media id, and refuses one with neither', async () => {
    const post = (body: unknown) =>
      fetch(`${fake.apiUrl}/${fake.phoneNumberId}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          messaging_product: 'whatsapp',
          to: '966501234567',
          type: 'document',
          ...(body as object),
        }),
      });
    expect((await post({ document })).status).toBe(200);
    expect((await post({ document: { id: '1234567890', filename: 'a.pdf' } })).status).toBe(200);
    expect((await post({ document: { filename: 'a.pdf' } })).status).toBe(400);
    expect((await post({})).status).toBe(400);
  });
});
