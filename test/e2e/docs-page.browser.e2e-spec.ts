import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../support/test-app.js';

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

describe('GET /docs in Chromium', () => {
  it('shows POST /plants, with everything loaded from the service itself', async ({ skip }) => {
    if (!existsSync(CHROMIUM)) skip(`${CHROMIUM} is absent: apt-get install -y chromium`);
    const api = await createTestApp();
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      await api.app.listen({ port: 0, host: '127.0.0.1' });
      const origin = await api.app.getUrl();
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
    } finally {
      await browser.close();
      await api.close();
    }
  });
});
