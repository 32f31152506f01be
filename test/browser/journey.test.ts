// The whole newcomer journey in a real browser (Debian's Chromium driven by playwright-core):
// register → name the first stack → create a token → call the gateway with it → see the call
// count rise on the overview and on RPC Analytics, a node's error inside a batch as an error;
// transaction landing fed to the gateway's figures shows in the overview's Transactions panel
// and the nodes page's landing table (docs/landing.md "Where they show"). Screenshots go to test-output/.

import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { emptyCounts } from '../../src/landing/counts.js';
import { startHarness } from '../helpers/gateway.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = new URL('../../../test-output/', import.meta.url).pathname;

// Skips with a visible reason when Debian's chromium package is not installed.
const noChromium = existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM} (apt-get install chromium)`;

{
  t.test('register → stack → token → call → counts rise on overview and analytics', { timeout: 90_000, skip: noChromium }, async (t) => {
    const { chromium } = await import('playwright-core');
    const h = await startHarness({ sims: [{}], console: true });
    t.teardown(() => h.close());
    const consoleUrl = h.gw.console!.url;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
      ],
    });
    t.teardown(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    mkdirSync(OUT, { recursive: true });

    await page.goto(consoleUrl + '/register');
    await page.fill('#email', 'newcomer@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL(/onboarding/);
    await page.fill('#stack-name', 'my-first-stack');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/stacks\/[^/]+$/);
    const stackUrl = page.url();

    await page.goto(stackUrl + '/tokens');
    await page.fill('#token-label', 'bot');
    await page.click('#create-token');
    // The token appears when the API answers: wait for it rather than read at once.
    await page.waitForFunction(() => /^jg_/.test(document.querySelector('#token-created')?.textContent?.trim() ?? ''), undefined, { timeout: 15_000 });
    const token = (await page.textContent('#token-created'))!.trim();
    t.match(token, /^jg_[A-Za-z0-9_-]{20,}$/, 'the full token is shown once');

    const singles = 7;
    for (let i = 0; i < singles; i++) {
      const r = await fetch(`${h.url}/api-token/${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      });
      t.equal(r.status, 200);
    }
    // A batch whose second call the node refuses (-32601): two calls, one error (docs/usage.md).
    const batch = await fetch(`${h.url}/api-token/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"nope"}]',
    });
    t.equal(batch.status, 200);
    await batch.text();
    const calls = singles + 2;
    // Landing as the data plane would report it: 4 sent, 3 landed, 1 expired, landing in 2 slots.
    const store = h.gw.store!;
    const account = (await store.accountByEmail('newcomer@example.com'))!;
    const [stack] = await store.listStacks(account.id);
    const [record] = await store.listTokens(account.id, stack!.id);
    const landing = { ...emptyCounts(), sent: 4, landed: 3, expired: 1 };
    landing.slots[2] = 3;
    h.gw.landing.add({ nodes: { n0: landing }, tokens: { [record!.id]: landing }, tokenNodes: { [record!.id]: { n0: landing } } });
    await h.gw.landingFlush!.flush();
    const start = Date.now();
    await page.goto(stackUrl);
    await page.waitForFunction((n) => Number(document.querySelector('#overview-calls')?.textContent?.replace(/[^0-9]/g, '') ?? 0) >= n, calls, {
      timeout: 20_000,
    });
    const delay = Date.now() - start;
    t.pass(`overview shows ${calls} calls (${delay} ms after the last call)`);
    const chartDrawn = await page.evaluate(() => {
      const c = document.querySelector('#traffic-chart') as HTMLCanvasElement | null;
      if (!c || c.width === 0) return false;
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
      return false;
    });
    t.ok(chartDrawn, 'the 7-day traffic chart rendered pixels');
    const landedCell = `#landing-rows tr[data-token="${record!.id}"] td:nth-child(3)`;
    await page.waitForFunction((sel) => document.querySelector<HTMLElement>(sel)?.dataset.value === '75', landedCell, { timeout: 20_000 });
    t.match(await page.textContent(landedCell), /75\.0 %/, 'the Transactions panel shows the landed share');
    await page.screenshot({ path: OUT + 'overview.png', fullPage: true });

    await page.goto(stackUrl + '/nodes');
    await page.waitForFunction((n) => Number(document.querySelector('#analytics-calls-total')?.textContent?.replace(/[^0-9]/g, '') ?? 0) >= n, calls, {
      timeout: 20_000,
    });
    t.match(await page.textContent('#analytics-table'), /getSlot/, 'per-method row');
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#analytics-errors-total')?.dataset.value === '1', undefined, { timeout: 20_000 });
    t.match(await page.textContent('#analytics-table'), /nope/, "the batch element's node error is booked under its method");
    t.match(await page.textContent('body'), new RegExp(h.url.replace(/[./]/g, '\\$&')), 'the HTTP endpoint is shown');
    await page.waitForSelector('#nodes-landing-rows tr[data-node="n0"]', { timeout: 20_000 });
    t.match(await page.textContent('#nodes-landing-rows tr[data-node="n0"]'), /75\.0 %/, 'the landing column per node');
    await page.screenshot({ path: OUT + 'analytics.png', fullPage: true });
    t.pass(`screenshots: ${OUT}overview.png, ${OUT}analytics.png`);
  });
}
