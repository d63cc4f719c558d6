import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { expectedTemplates, type ExpectedTemplate } from '../../src/whatsapp/template-catalog.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import type { ListedTemplate } from '../fakes/graph-templates.ts';
import { runWathiq } from './run-wathiq.ts';

/**
 * `npx wathiq whatsapp templates check` against the fake Graph API's template list, paged as Meta pages it: an
 * account registered as Wathiq sends, then one with a template missing, one worded differently, one with other
 * buttons and one still pending.
 */

let graph: FakeGraphApi;
let env: Record<string, string>;
beforeAll(async () => {
  graph = await startFakeGraphApi();
  env = {
    WHATSAPP_API_URL: graph.apiUrl,
    WHATSAPP_ACCESS_TOKEN: graph.accessToken,
    WHATSAPP_BUSINESS_ACCOUNT_ID: graph.businessAccountId,
  };
});
afterAll(() => graph?.close());

/** A template as WhatsApp Manager registers it, when registered as Wathiq sends it. */
function registered(t: ExpectedTemplate): ListedTemplate {
  if (t.category === 'AUTHENTICATION') {
    return {
      name: t.name,
      language: t.language,
      status: 'APPROVED',
      category: 'AUTHENTICATION',
      components: [
        { type: 'BODY', text: '*{{1}}* is your verification code.' },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', text: 'Copy code' }] },
      ],
    };
  }
  return {
    name: t.name,
    language: t.language,
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      ...(t.header ? [{ type: 'HEADER' as const, format: t.header }] : []),
      { type: 'BODY', text: t.body! },
      ...(t.buttons.length > 0
        ? [
            {
              type: 'BUTTONS' as const,
              buttons: t.buttons.map((b) => ({
                type: b.type,
                text: b.text,
                ...(b.type === 'URL' && { url: 'https://wathiq.example/a/{{1}}' }),
              })),
            },
          ]
        : []),
    ],
  };
}

/** Templates of the business that are not Wathiq's: enough of them that the list spans pages. */
const unrelated = Array.from({ length: 230 }, (_, i): ListedTemplate => ({
  name: `spring_sale_${i}`,
  language: 'en',
  status: 'APPROVED',
  category: 'MARKETING',
  components: [{ type: 'BODY', text: `Sale number ${i}` }],
}));

const config = loadConfig({ NODE_ENV: 'test' }, { role: 'api' });
const ours = () => expectedTemplates(config.whatsapp.templates, config.otp.template).map(registered);

beforeEach(() => {
  graph.templates.length = 0;
  graph.reset();
});

interface CheckOutput {
  problems: number;
  templates: { name: string; language: string; verdict: string; problems: string[] }[];
}

describe('whatsapp templates check', () => {
  it('passes when every template is registered as Wathiq sends it, reading every page', async () => {
    // Wathiq's templates spread among the others, so a check that read only the first page would miss some.
    const mine = ours();
    graph.templates.push(
      ...unrelated.slice(0, 90),
      ...mine.slice(0, 10),
      ...unrelated.slice(90),
      ...mine.slice(10),
    );
    const run = await runWathiq(['whatsapp', 'templates', 'check'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`All ${mine.length} templates are registered as Wathiq sends them.`);
    expect(run.stderr).toMatch(/page 3: \d+ templates so far/);
    const lists = graph.requests.filter((r) => r.path.includes('/message_templates'));
    expect(lists).toHaveLength(3);
    expect(lists.every((r) => r.authorized && r.method === 'GET')).toBe(true);
  });

  it('names what is missing, what differs and what is not approved, and exits 1', async () => {
    const mine = ours();
    const find = (name: string, language: string) =>
      mine.find((t) => t.name === name && t.language === language)!;
    mine.splice(mine.indexOf(find('wathiq_reminder_review', 'ar')), 1);
    find('wathiq_document_voided', 'en').components.find((c) => c.type === 'BODY')!.text =
      'Hello {{1}}, your document {{2}} was cancelled.';
    find('wathiq_approval_request_approve', 'en')
      .components.find((c) => c.type === 'BUTTONS')!
      .buttons!.pop();
    find('wathiq_signed_copy', 'ar').status = 'PENDING';
    graph.templates.push(...mine, ...unrelated.slice(0, 5));

    const run = await runWathiq(['whatsapp', 'templates', 'check', '--json'], env);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as CheckOutput;
    const verdicts = out.templates.filter((t) => t.verdict !== 'ok');
    expect(verdicts.map((t) => [t.name, t.language, t.verdict])).toEqual(
      expect.arrayContaining([
        ['wathiq_approval_request_approve', 'en', 'differs'],
        ['wathiq_document_voided', 'en', 'differs'],
        ['wathiq_reminder_review', 'ar', 'missing'],
        ['wathiq_signed_copy', 'ar', 'not_approved'],
      ]),
    );
    expect(verdicts).toHaveLength(4);
    expect(out.problems).toBe(4);
    const voided = verdicts.find((t) => t.name === 'wathiq_document_voided')!;
    expect(voided.problems[0]).toContain('has been cancelled by its sender');
    const human = await runWathiq(['whatsapp', 'templates', 'check'], env);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('4 of');
    expect(human.stdout).toMatch(/missing\s+ar\s+wathiq_reminder_review/);
  });

  it('checks the text Wathiq sends, word for word', () => {
    // The English "voided" notice exactly as the console outbox and the README show it.
    const voided = ours().find((t) => t.name === 'wathiq_document_voided' && t.language === 'en')!;
    expect(voided.components).toEqual([
      {
        type: 'BODY',
        text: 'Hello {{1}}, the document "{{2}}" (reference {{3}}) has been cancelled by its sender. No action is needed.',
      },
    ]);
    const request = ours().find((t) => t.name === 'wathiq_approval_request_review' && t.language === 'ar')!;
    expect(request.components.at(-1)!.buttons!.map((b) => `${b.type} ${b.text}`)).toEqual([
      'QUICK_REPLY تمت المراجعة',
      'QUICK_REPLY رفض',
      'URL فتح المستند',
    ]);
  });

  it('fails clearly without the account id, with a refused token, or for an account the Graph API does not know', async () => {
    const unset = await runWathiq(['whatsapp', 'templates', 'check'], {
      ...env,
      WHATSAPP_BUSINESS_ACCOUNT_ID: '',
    });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('WHATSAPP_BUSINESS_ACCOUNT_ID');
    const refused = await runWathiq(['whatsapp', 'templates', 'check'], {
      ...env,
      WHATSAPP_ACCESS_TOKEN: 'wrong',
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The Graph API refused the template list (401');
    const unknown = await runWathiq(['whatsapp', 'templates', 'check'], {
      ...env,
      WHATSAPP_BUSINESS_ACCOUNT_ID: '1',
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('The Graph API refused the template list (400');
  });
});
