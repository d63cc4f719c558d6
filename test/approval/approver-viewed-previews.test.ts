import { sha256Hex } from '../../src/auth/tokens.ts';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isLinkPreview } from '../../src/approval-page/link-preview.ts';
import { createDocument, PHONES, startFlowHarness, type FlowHarness } from '../helpers/approval-flow.ts';

/**
 * `approver.viewed` is the approver opening their page, not a chat app fetching the link to draw its preview card
 * (issue 15 item 7, review). No worker: the link is given to the approver row directly, as the send would.
 */
let h: FlowHarness;
beforeAll(async () => {
  h = await startFlowHarness({ worker: false });
});
afterAll(() => h.close());

/** User agents the preview fetchers really send. */
const PREVIEWS = {
  whatsapp: 'WhatsApp/2.23.20.0 A',
  whatsappIos: 'WhatsApp/2.24.8.78 i',
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  imessage:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  meta: 'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
  twitter: 'Twitterbot/1.0',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  telegram: 'TelegramBot (like TwitterBot)',
  linkedin: 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  discord: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  teams:
    'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
  google: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};
const PEOPLE = {
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  android:
    'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  facebookInApp:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/458.0.0.38.108;FBBV/574409155;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]',
  cubot:
    'Mozilla/5.0 (Linux; Android 10; CUBOT_X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
};

it('tells preview fetchers and HEAD requests from people', () => {
  for (const [name, agent] of Object.entries(PREVIEWS)) expect(isLinkPreview('GET', agent), name).toBe(true);
  for (const [name, agent] of Object.entries(PEOPLE)) expect(isLinkPreview('GET', agent), name).toBe(false);
  expect(isLinkPreview('HEAD', PEOPLE.iphone)).toBe(true);
  expect(isLinkPreview('GET', undefined)).toBe(false);
});

it('records no approver.viewed for a link preview or a HEAD request; the approver opening it is recorded once', async () => {
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [{ name: 'Previewed Approver', phone: PHONES.saudiA, action_type: 'approve_only' }],
  });
  const token = randomBytes(32).toString('base64url');
  await h.service.database.db('documents').where({ id: doc.id }).update({ status: 'pending' });
  await h.service.database
    .db('approvers')
    .where({ document_id: doc.id })
    .update({ link_token_sha256: sha256Hex(token) });
  const open = (agent: string, method = 'GET') =>
    fetch(`${h.service.api.url}/a/${token}`, { method, headers: { 'user-agent': agent } });
  const views = () =>
    h.service.database
      .db('document_events')
      .where({ document_id: doc.id, event: 'approver.viewed' })
      .select<{ approver_id: string }[]>('approver_id');

  for (const [name, agent] of Object.entries(PREVIEWS)) {
    const res = await open(agent);
    // The preview still gets the page (its title makes the card).
    expect(res.status, name).toBe(200);
    await res.text();
  }
  const head = await open(PEOPLE.iphone, 'HEAD');
  expect(head.status).toBe(200);
  expect(await views()).toEqual([]);

  const person = await open(PEOPLE.android);
  expect(person.status).toBe(200);
  await person.text();
  await (await open(PEOPLE.iphone)).text();
  expect(await views()).toEqual([{ approver_id: doc.approvers[0]!.id }]);
});
