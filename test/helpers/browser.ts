// Debian's chromium driven by playwright-core, for the bench page's browser
// tests (test/bench-page/). Declare those tests with
// `testNeeding('chromium', test)` (requires.ts): skipped with one line when
// /usr/bin/chromium is absent, a failure under CI. One browser per test
// file; each test opens a fresh context (its own sessionStorage).
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumArgs } from '../../testkit/chromium.js';

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs() });
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and CSP refusals the page produced (chromium reports a CSP violation on the console). */
  consoleErrors: string[];
  cspViolations: string[];
  /** Page errors (uncaught exceptions) and dialogs (alert from an injected script would land here). */
  pageErrors: string[];
  dialogs: string[];
  /** Requests that failed or were answered 400 and above: `STATUS URL`, or `failed URL`. */
  failedRequests: string[];
}

export async function openPage(
  browser: Browser,
  viewport: { width: number; height: number } = DESKTOP,
): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const opened: OpenedPage = {
    context,
    page,
    consoleErrors: [],
    cspViolations: [],
    pageErrors: [],
    dialogs: [],
    failedRequests: [],
  };
  page.on('response', (response) => {
    if (response.status() >= 400) opened.failedRequests.push(`${response.status()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => opened.failedRequests.push(`failed ${request.url()}`));
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    const text = message.text();
    if (message.type() === 'error') opened.consoleErrors.push(text);
    if (/Content Security Policy/i.test(text)) opened.cspViolations.push(text);
  });
  page.on('pageerror', (error) => opened.pageErrors.push(error.message));
  page.on('dialog', (dialog) => {
    opened.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return opened;
}

/** Whether the document is wider than the viewport (sideways scrolling). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  // A string: this file is compiled without the DOM library; the page evaluates it.
  return (await page.evaluate('document.documentElement.scrollWidth > window.innerWidth')) === true;
}
