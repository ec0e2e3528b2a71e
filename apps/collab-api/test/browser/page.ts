import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM_FLAGS, ensureChromium } from './chromium.js';

/**
 * A page of a fresh chromium (a profile of its own, so a tab's session storage starts empty), the
 * errors it reports (scripts, CSP, failed loads) gathered in `problems`.
 */
export async function withBrowser(
  use: (page: Page, problems: string[]) => Promise<void>,
  viewport = { width: 1280, height: 900 },
): Promise<void> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'collab-console-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: ensureChromium(),
    args: CHROMIUM_FLAGS,
    viewport,
    acceptDownloads: true,
  });
  try {
    const page = browser.pages()[0] ?? (await browser.newPage());
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // A failed load is reported with its address below.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    });
    await use(page, problems);
  } finally {
    await browser.close();
    await rm(profile, { recursive: true, force: true });
  }
}

/** A loopback port free now, for a server whose public address must be known before it starts. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Serves `app` on 127.0.0.1:`port`. */
export async function listen(app: RequestListener, port: number): Promise<Server> {
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/** Fills the sign-in form of whichever console page is open. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#who').filter({ hasText: 'Signed in as' }).waitFor();
}

/** The controls of the page that have no accessible name (a label, aria-label or aria-labelledby, a button's text). */
export function unlabelled(page: Page): Promise<string[]> {
  // A string: the tests are compiled without the DOM's types.
  return page.evaluate(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((control) => control.offsetParent !== null)
    .filter((control) => !(
      (control.labels && control.labels.length > 0) ||
      control.getAttribute('aria-label') ||
      control.getAttribute('aria-labelledby') ||
      (control.tagName === 'BUTTON' && control.textContent.trim())
    ))
    .map((control) => control.outerHTML.slice(0, 120))`);
}

/**
 * What makes the page wider than its viewport (a horizontal scroll of the whole page): the
 * outermost elements that reach past its right edge; [] when it fits.
 */
export function overflows(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    const clipped = (element) => {
      for (let parent = element.parentElement; parent; parent = parent.parentElement)
        if (getComputedStyle(parent).overflowX !== 'visible') return true;
      return false;
    };
    const wide = [...document.body.querySelectorAll('*')].filter(
      (element) => element.getBoundingClientRect().right > width + 0.5 && !clipped(element),
    );
    return wide
      .filter((element) => !wide.some((other) => other !== element && other.contains(element)))
      .map((element) => element.outerHTML.slice(0, 100))
      .concat([\`scrollWidth \${document.documentElement.scrollWidth} > \${width}\`]);
  })()`);
}

/** The text of the element that has the keyboard's focus. */
export function focused(page: Page): Promise<string | null> {
  return page.evaluate('document.activeElement && document.activeElement.textContent');
}
