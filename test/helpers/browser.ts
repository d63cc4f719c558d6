import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A phone as the approval page meets it: 412 × 915 CSS pixels at devicePixelRatio 3, touch, mobile viewport. */
export const PHONE = {
  viewport: { width: 412, height: 915 },
  deviceScaleFactor: 3,
  isMobile: true,
  hasTouch: true,
};

/** The window a browser context opens with. */
interface Device {
  viewport: { width: number; height: number };
  deviceScaleFactor?: number;
  isMobile?: boolean;
  hasTouch?: boolean;
}

const DESKTOP: Device = { viewport: { width: 1280, height: 900 } };

const LAUNCH = {
  executablePath: CHROMIUM_PATH,
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

/** Debian's Chromium, headless, with a fresh profile of its own (a desktop window unless `device` says otherwise). */
export async function launchBrowser(
  device: Device = DESKTOP,
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    ...LAUNCH,
    locale: 'en-US',
    ...device,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * One headless Chromium for a file that needs several fresh browsers: each `newContext` is as a new browser
 * (empty cache, cookies and storage), without starting Chromium again.
 */
export async function launchChromium(): Promise<{
  newContext(device?: Device): Promise<BrowserContext>;
  close(): Promise<void>;
}> {
  const browser = await chromium.launch(LAUNCH);
  return {
    newContext: (device = DESKTOP) => browser.newContext({ locale: 'en-US', ...device }),
    close: () => browser.close(),
  };
}
