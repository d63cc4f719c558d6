import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildTemplateMessage, languageFor, renderPreview } from '../../src/whatsapp/templates.ts';
import { notice, templates } from '../helpers/whatsapp-fixtures.ts';

describe('languageFor', () => {
  it('speaks Arabic to Saudi numbers and English to the rest, unless the approver chose', () => {
    expect(languageFor('966501234567')).toBe('ar');
    expect(languageFor('+966501234567')).toBe('ar');
    expect(languageFor('447700900123')).toBe('en');
    expect(languageFor('9715012345678')).toBe('en');
    expect(languageFor('966501234567', 'en')).toBe('en');
    expect(languageFor('447700900123', 'ar')).toBe('ar');
    expect(languageFor('447700900123', null)).toBe('en');
  });
});

describe('buildTemplateMessage', () => {
  it('sign, in Arabic: body parameters and a URL button carrying the token, no quick replies', () => {
    const n = notice({ actionType: 'sign', language: 'ar' });
    expect(buildTemplateMessage(n, templates)).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '966501234567',
      type: 'template',
      template: {
        name: 'wathiq_approval_request',
        language: { code: 'ar' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'سارة القحطاني' },
              { type: 'text', text: 'عقد توريد' },
              { type: 'text', text: 'WQT-2026-000042' },
              { type: 'text', text: 'توقيع' },
            ],
          },
          { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: n.linkToken }] },
        ],
      },
    });
  });

  it('stamp, in English: the link template and the English action word', () => {
    const n = notice({ actionType: 'stamp', language: 'en', phone: '447700900123', approverName: 'Sam' });
    const body = buildTemplateMessage(n, templates);
    expect(body.template.name).toBe('wathiq_approval_request');
    expect(body.template.language.code).toBe('en');
    expect(body.template.components[0]).toMatchObject({ parameters: [{}, {}, {}, { text: 'stamp' }] });
    expect(body.template.components.filter((c) => c.type === 'button')).toEqual([
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: n.linkToken }] },
    ]);
  });

  it('approve_only: approve and reject quick replies, then the URL button', () => {
    const n = notice({ actionType: 'approve_only', language: 'en' });
    const body = buildTemplateMessage(n, templates);
    expect(body.template.name).toBe('wathiq_approval_request_approve');
    expect(body.template.components.slice(1)).toEqual([
      {
        type: 'button',
        sub_type: 'quick_reply',
        index: '0',
        parameters: [{ type: 'payload', payload: `approve:${n.linkToken}` }],
      },
      {
        type: 'button',
        sub_type: 'quick_reply',
        index: '1',
        parameters: [{ type: 'payload', payload: `reject:${n.linkToken}` }],
      },
      { type: 'button', sub_type: 'url', index: '2', parameters: [{ type: 'text', text: n.linkToken }] },
    ]);
    expect(body.template.components[0]).toMatchObject({ parameters: [{}, {}, {}, { text: 'approve' }] });
  });

  it('review_only: review (not approve) and reject payloads, Arabic action word', () => {
    const n = notice({ actionType: 'review_only', language: 'ar' });
    const body = buildTemplateMessage(n, templates);
    expect(body.template.name).toBe('wathiq_approval_request_review');
    const payloads = body.template.components.flatMap((c) =>
      c.type === 'button' && c.sub_type === 'quick_reply' ? [c.parameters[0].payload] : [],
    );
    expect(payloads).toEqual([`review:${n.linkToken}`, `reject:${n.linkToken}`]);
    expect(body.template.components[0]).toMatchObject({ parameters: [{}, {}, {}, { text: 'مراجعة' }] });
  });

  it('reminders use the reminder templates with the same buttons', () => {
    expect(
      buildTemplateMessage(notice({ kind: 'reminder', actionType: 'sign' }), templates).template.name,
    ).toBe('wathiq_reminder');
    const quick = buildTemplateMessage(notice({ kind: 'reminder', actionType: 'approve_only' }), templates);
    expect(quick.template.name).toBe('wathiq_reminder_approve');
    expect(quick.template.components).toHaveLength(4);
  });

  it('voided and rejected notices inform only: three body parameters, no buttons', () => {
    for (const kind of ['voided', 'rejected'] as const) {
      const body = buildTemplateMessage(notice({ kind, actionType: 'approve_only' }), templates);
      expect(body.template.name).toBe(
        kind === 'voided' ? 'wathiq_document_voided' : 'wathiq_document_rejected',
      );
      expect(body.template.components).toEqual([
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'سارة القحطاني' },
            { type: 'text', text: 'عقد توريد' },
            { type: 'text', text: 'WQT-2026-000042' },
          ],
        },
      ]);
    }
  });

  it('takes template names and language codes from the configuration', () => {
    const custom = loadConfig({
      WHATSAPP_TEMPLATE_APPROVAL: 'acme_sign_request',
      WHATSAPP_TEMPLATE_LANGUAGE_EN: 'en_US',
    }).whatsapp.templates;
    const body = buildTemplateMessage(notice({ language: 'en' }), custom);
    expect(body.template.name).toBe('acme_sign_request');
    expect(body.template.language.code).toBe('en_US');
  });

  it('flattens new lines, tabs and runs of spaces that Meta refuses in parameters', () => {
    const n = notice({ documentTitle: 'Supply\ncontract\t2026     final', approverName: '   ' });
    const params = buildTemplateMessage(n, templates).template.components[0]!;
    expect(params).toMatchObject({
      parameters: [{ text: '-' }, { text: 'Supply contract 2026 final' }, {}, {}],
    });
  });

  it('strips a leading plus from the recipient', () => {
    expect(buildTemplateMessage(notice({ phone: '+966501234567' }), templates).to).toBe('966501234567');
  });

  it('refuses an actionable notice without a link token', () => {
    expect(() => buildTemplateMessage(notice({ linkToken: '' }), templates)).toThrow(/link token/);
  });
});

describe('renderPreview', () => {
  it('fills the template text and lists the buttons as the phone shows them', () => {
    const n = notice({
      actionType: 'approve_only',
      language: 'en',
      approverName: 'Sam',
      documentTitle: 'NDA',
    });
    const preview = renderPreview(n);
    expect(preview.text).toBe(
      'Hello Sam, you are asked to approve the document "NDA" (reference WQT-2026-000042). Tap the button below to open it.',
    );
    expect(preview.buttons).toEqual([
      { type: 'quick_reply', label: 'Approve', payload: `approve:${n.linkToken}` },
      { type: 'quick_reply', label: 'Reject', payload: `reject:${n.linkToken}` },
      { type: 'url', label: 'Open document', suffix: n.linkToken },
    ]);
  });

  it('renders Arabic text for Arabic notices', () => {
    const preview = renderPreview(notice({ kind: 'voided' }));
    expect(preview.text).toContain('سارة القحطاني');
    expect(preview.text).toContain('ألغى');
    expect(preview.buttons).toEqual([]);
  });
});
