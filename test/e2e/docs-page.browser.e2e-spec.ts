import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MovingEndpoint } from '../support/moving-endpoint.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { onDatabaseServerRun } from '../support/test-database.js';

/** Debian's Chromium (`apt-get install -y chromium`); CI installs it. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const SCREENSHOT = new URL('../artifacts/docs-page.png', import.meta.url);

/**
 * Opens `origin`/docs, tries GET /health/live out (Try it out, Execute) and answers where
 * the page sent the request and the status it shows.
 */
async function tryHealthLiveOut(page: Page, origin: string) {
  await page.goto(`${origin}/docs`);
  const operation = page.locator('.opblock-get', {
    has: page.locator('.opblock-summary-path[data-path="/health/live"]'),
  });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  const sent: string[] = [];
  page.on('request', (request) => sent.push(request.url()));
  await operation.locator('button.execute').click();
  // The answer it shows: a status, or "Failed to fetch" when the server is not there.
  const answer = operation.locator('.live-responses-table tbody .response-col_status').first();
  await answer.waitFor();
  return { sent, shown: (await answer.textContent())?.trim() };
}

// The page in a browser, not the database: the embedded run covers it.
describe.skipIf(!existsSync(CHROMIUM) || onDatabaseServerRun)(
  'GET /docs in Chromium (apt-get install -y chromium)',
  () => {
    let api: TestApp;
    let browser: Browser;
    let origin: string;

    beforeAll(async () => {
      api = await createTestApp();
      // A random port: the page must not offer the document's default, localhost:3000.
      await api.app.listen({ port: 0, host: '127.0.0.1' });
      origin = await api.app.getUrl();
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    });
    afterAll(async () => {
      await browser?.close();
      await api?.close();
    });

    it('shows POST /plants, with everything loaded from the service itself', async () => {
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) elsewhere.push(url);
      });

      const response = await page.goto(`${origin}/docs`);
      expect(response?.status()).toBe(200);
      const createPlant = page.locator('.opblock-post', {
        has: page.locator('.opblock-summary-path[data-path="/plants"]'),
      });
      await createPlant.waitFor();
      expect(await createPlant.locator('.opblock-summary-method').textContent()).toBe('POST');
      expect(await page.locator('.opblock-summary-path[data-path="/plants/{id}"]').count()).toBe(3);
      expect(await page.locator('.info .title').textContent()).toContain('Plant Store');

      await mkdir(new URL('.', SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT.pathname, fullPage: true });
      expect(elsewhere).toEqual([]);
    });

    it('sends "Try it out" to the origin the page was loaded from, offered as the server "/"', async () => {
      const page = await browser.newPage();
      expect(await tryHealthLiveOut(page, origin)).toEqual({
        sent: [`${origin}/health/live`],
        shown: '200',
      });
      expect(await page.locator('.servers select').inputValue()).toBe('/');
    });

    it('sends it to the proxy when the page came through one, on another port', async () => {
      const { port } = api.app.getHttpServer().address() as AddressInfo;
      const proxy = await MovingEndpoint.start(port);
      try {
        const proxied = `http://127.0.0.1:${proxy.port}`;
        expect(await tryHealthLiveOut(await browser.newPage(), proxied)).toEqual({
          sent: [`${proxied}/health/live`],
          shown: '200',
        });
      } finally {
        await proxy.stop();
      }
    });
  },
);
