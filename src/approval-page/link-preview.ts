/**
 * Link previews: chat apps and social sites fetch a link as soon as it is pasted or
 * received, to draw its preview card. Such a fetch is not the approver opening their page, so it records no
 * `approver.viewed` (docs/webhooks.md). A fetch is a preview when it is a HEAD request (no browser opens a page
 * with HEAD) or when its User-Agent is a known preview fetcher's. The list is of crawlers, not of in-app browsers:
 * Facebook's or Instagram's in-app browser (FBAN, Instagram), LINE's or Snapchat's are people, and are counted.
 */
const PREVIEW_AGENTS: readonly RegExp[] = [
  // WhatsApp's preview fetcher is "WhatsApp/2.23.20.0 A" (also used by Signal): the whole agent, not a browser's.
  /^WhatsApp\//i,
  /facebookexternalhit|facebot|facebookcatalog|meta-externalagent|meta-externalfetcher/i,
  /twitterbot/i,
  /slackbot|slack-imgproxy/i,
  /telegrambot/i,
  /linkedinbot/i,
  /discordbot/i,
  // Microsoft Teams and Skype.
  /skypeuripreview|microsoftpreview|msteamsbot/i,
  /googlebot|google-pagerenderer|googleother|google-read-aloud|apis-google|feedfetcher-google/i,
  /applebot/i,
  /bingbot|bingpreview/i,
  /pinterestbot|pinterest\/0\./i,
  /redditbot/i,
  /mastodon\//i,
  /embedly|iframely|bitlybot|vkshare|yandexbot|duckduckbot|zoominfobot/i,
];

/** Whether a request for the approval page is a link preview's fetch rather than a person opening it. */
export function isLinkPreview(method: string, userAgent: string | undefined): boolean {
  if (method.toUpperCase() === 'HEAD') return true;
  const agent = userAgent?.trim() ?? '';
  return PREVIEW_AGENTS.some((pattern) => pattern.test(agent));
}
