// Browser end-to-end test of the `skillrag serve` web page.
//
//   eval "$(scripts/setup-test-clients)"
//   NODE_PATH="$SKILLRAG_TEST_NODE_PATH" node crates/server/tests/web/e2e.mjs http://127.0.0.1:18080 docs/screenshots
//
// The server must serve the example project of `skillrag init` (labor-law, router-faq,
// tea-brewing), indexed. With SKILLRAG_API_TOKEN set, the test expects the page to ask for the
// token and types it in. Exits 1 with a message on the first failed check.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

// ESM imports ignore NODE_PATH; require() honours it.
const require = createRequire(import.meta.url);
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (err) {
  console.error('FAIL: cannot load playwright-core; set NODE_PATH (scripts/setup-test-clients prints it):', err.message);
  process.exit(1);
}

const [baseArg, shotDir] = process.argv.slice(2);
if (!baseArg || !shotDir) {
  console.error('usage: node e2e.mjs BASE_URL SCREENSHOT_DIR');
  process.exit(2);
}
const base = baseArg.replace(/\/+$/, '');
fs.mkdirSync(shotDir, { recursive: true });

const executablePath = process.env.SKILLRAG_TEST_CHROMIUM || '/usr/bin/chromium';
const ANSWER_TIMEOUT = 90_000;
const INDEX_TIMEOUT = 120_000;
const SKILLS = ['labor-law', 'router-faq', 'tea-brewing'];

// Markdown in answers and passages. The server's own knowledge (the demo's troubleshooting.md
// has steps and an LED table) is checked as it comes; a hostile knowledge file is stood in for
// by rewriting responses in the browser (page.route), since the project the test serves is
// the plain `skillrag init` demo. What matters is what the page makes of such text.
const INJECTED = [
  'Injected passage <img src=x onerror=alert(1)> and <script>window.__xss = 1</script> end.',
  '',
  '[click](javascript:alert(1)) <a href="javascript:alert(1)">raw link</a> ![pic](http://127.0.0.1:9/x.png)',
  '',
  '| col | value |',
  '|---|---|',
  '| a | <img src=x onerror=alert(1)> |',
].join('\n');
const MD_QUESTION = 'markdown rendering check';
const MD_ANSWER = [
  'To reset the router, use the **Reset** hole on the back.[1]',
  '',
  '1. Hold the pin for *10 seconds*.[1]',
  '2. Release it.',
  '',
  '- the LED blinks amber',
  '- the router restarts',
  '',
  '| LED | Meaning |',
  '|---|---|',
  '| Blinking amber | Factory reset in progress [2] |',
  '',
  'See [the manual](https://example.com/manual) or [setup](setup.md), or faq.md at http://192.168.50.1/faq.',
  '',
  'Markers in code stay text: `[1]`. The file said <img src=x onerror=alert(1)> and <script>window.__xss = 1</script> [x](javascript:alert(1)).[2]',
].join('\n');
const MD_CITATIONS = [
  { n: 1, skill: 'router-faq', source: 'knowledge/troubleshooting.md', heading: 'Factory reset', pages: null,
    text: '1. Leave the router powered on.\n2. Find the small **Reset** hole on the back.' },
  { n: 2, skill: 'router-faq', source: 'knowledge/troubleshooting.md', heading: 'Injected', pages: null, text: INJECTED },
];
// A cited picture. The demo project has none (indexing one needs OCR; crates/cli/tests/serve.rs
// checks the real one over HTTP), so the answer, the document and the picture's bytes are
// stood in for in the browser, the picture by the OCR fixture notice-zh.png (1200×520).
const PICTURE_QUESTION = 'picture citation check';
const PICTURE_PNG = fs.readFileSync(new URL('../../../../testdata/scans/notice-zh.png', import.meta.url));
const PICTURE_TEXT = '# 办公室开放时间通知\n\n办公室开放时间为周一至周五上午九点到下午五点';
const PICTURE_ANSWER = '办公室开放时间为周一至周五上午九点到下午五点。[1] The signed copy is a TIFF.[2]';
const PICTURE_CITATIONS = [
  { n: 1, skill: 'router-faq', source: 'knowledge/notice.png', heading: '办公室开放时间通知', pages: null, text: PICTURE_TEXT,
    image: { path: 'knowledge/notice.png', width: 1200, height: 520, bytes: PICTURE_PNG.length } },
  { n: 2, skill: 'router-faq', source: 'knowledge/signed.tiff', heading: 'Signed notice', pages: null, text: 'Signed.',
    image: { path: 'knowledge/signed.tiff', width: 2400, height: 1040, bytes: 123456 } },
];
/** An SSE body like /v1/chat/completions streams, cut mid-table so the page renders partial Markdown. */
function fakeStream(content, citations) {
  const cut = content.indexOf('| Blinking');
  const base = { id: 'chatcmpl-md', object: 'chat.completion.chunk', created: 0, model: 'skillrag/auto' };
  const events = [content.slice(0, cut), content.slice(cut)].map((piece) => ({
    ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
  }));
  events.push({
    ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], citations,
    skillrag: { route: { skills: ['router-faq'], decision: 'single', confidence: 0.9 }, refusal: null },
  });
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** What in `root` a knowledge file could have injected: elements, handlers, script URLs. */
function injectedIn(root) {
  const found = [];
  for (const e of root.querySelectorAll('img, script, iframe, object, embed, svg, style, link, meta')) found.push(e.tagName.toLowerCase());
  for (const e of root.querySelectorAll('*')) {
    for (const a of e.attributes) if (/^on/i.test(a.name)) found.push(`${e.tagName.toLowerCase()}[${a.name}]`);
    // Links: citation markers (#) and http(s) only.
    const href = e.getAttribute('href');
    if (href !== null && !/^(#$|https?:\/\/)/i.test(href)) found.push(`${e.tagName.toLowerCase()}[href=${href}]`);
  }
  return found;
}

class Failure extends Error {}
function assert(cond, message) {
  if (!cond) throw new Failure(message);
}
const log = (...args) => console.log(...args);

const jsErrors = [];
const dialogs = [];
const networkErrors = [];
let step = 'start';

async function main() {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => jsErrors.push(`[${step}] uncaught: ${err.message}`));
    // An alert() from injected markup would show here.
    page.on('dialog', (d) => { dialogs.push(`[${step}] ${d.type()}: ${d.message()}`); d.dismiss().catch(() => {}); });
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      // A non-2xx response is logged by Chromium as "Failed to load resource"; those are API
      // results the page handles (shown in its banner), not script errors.
      if (/^Failed to load resource/.test(text)) networkErrors.push(`[${step}] ${text} ${msg.location().url || ''}`);
      else jsErrors.push(`[${step}] console.error: ${text}`);
    });

    const byId = (id) => page.getByTestId(id);
    const bannerClear = async () => {
      const banner = byId('error-banner');
      if (await banner.isVisible()) {
        throw new Failure(`error banner shown: ${(await byId('error-text').textContent()).trim()}`);
      }
    };

    // ----------------------------------------------------------------------------------- load
    step = 'load';
    const res = await page.goto(`${base}/`, { waitUntil: 'domcontentloaded' });
    assert(res && res.ok(), `GET / answered ${res && res.status()}`);
    const token = process.env.SKILLRAG_API_TOKEN;
    if (token) {
      await byId('auth-bar').waitFor({ state: 'visible' }).catch(() => {
        throw new Failure('SKILLRAG_API_TOKEN is set but the page did not ask for a token');
      });
      await byId('auth-token').fill(token);
      await byId('auth-save').click();
      await byId('auth-bar').waitFor({ state: 'hidden' });
      log('ok   auth: the page asked for the token after a 401 and uses it');
    }
    await page.locator('[data-testid="skill-picker"] option[value="router-faq"]').waitFor({ state: 'attached' }).catch(() => {
      throw new Failure('the skill picker was not filled with the skills (GET /v1/models)');
    });
    const options = await byId('skill-picker').locator('option').allTextContents();
    for (const s of ['auto', ...SKILLS]) assert(options.includes(s), `skill picker lacks ${s}: ${options.join(', ')}`);
    log(`ok   load: skill picker offers ${options.join(', ')}`);

    // ----------------------------------------------------------------------------------- chat
    step = 'chat';
    assert(await byId('view-chat').isVisible(), 'the chat view is not the first view');
    await byId('skill-picker').selectOption('auto');
    const answers = byId('answer');
    const ask = async (question) => {
      const before = await answers.count();
      await byId('chat-input').fill(question);
      await byId('send').click();
      const answer = answers.nth(before);
      await answer.waitFor({ state: 'attached' });
      await page.waitForFunction(
        (el) => el.dataset.state === 'done' || el.dataset.state === 'error',
        await answer.elementHandle(), { timeout: ANSWER_TIMEOUT },
      ).catch(() => { throw new Failure(`no finished answer to "${question}" within ${ANSWER_TIMEOUT / 1000} s`); });
      const state = await answer.getAttribute('data-state');
      if (state !== 'done') {
        const banner = (await byId('error-banner').isVisible()) ? await byId('error-text').textContent() : '';
        throw new Failure(`the answer to "${question}" failed: ${(await answer.innerText()).trim()} ${banner}`);
      }
      return answer;
    };

    const q1 = 'How do I factory reset the router?';
    const a1 = await ask(q1);
    const a1text = (await a1.locator('.bubble').innerText()).trim();
    assert(a1text.length > 0, 'the streamed answer is empty');
    assert(await a1.getByTestId('refusal').count() === 0, `"${q1}" was refused: ${a1text}`);
    const links = a1.getByTestId('citation-link');
    const nLinks = await links.count();
    assert(nLinks > 0, `the answer has no citation link: ${a1text.slice(0, 300)}`);
    const route1 = (await a1.getByTestId('route').innerText().catch(() => '')).trim();
    assert(route1.includes('router-faq'), `the route under the answer does not name router-faq: "${route1}"`);
    log(`ok   chat: streamed answer (${a1text.length} chars, ${nLinks} citation links), ${route1}`);

    await links.first().click();
    const panel = byId('chunk-panel');
    await panel.waitFor({ state: 'visible' }).catch(() => { throw new Failure('clicking a citation did not open the chunk panel'); });
    await page.waitForFunction(() => {
      const doc = document.querySelector('[data-testid="chunk-doc"]');
      return doc && (doc.querySelector('[data-testid="doc-chunk"]') || doc.textContent === '');
    }, null, { timeout: 15_000 }).catch(() => { throw new Failure('the cited document did not load in the chunk panel'); });
    await bannerClear().catch((e) => { throw new Failure(`opening the citation: ${e.message}`); });
    const title = (await byId('chunk-title').innerText()).trim();
    const cited = (await byId('chunk-cited').innerText()).trim();
    const docChunks = await panel.getByTestId('doc-chunk').count();
    const highlighted = panel.locator('[data-testid="doc-chunk"][data-cited="true"]');
    assert(title.includes('router-faq/'), `chunk panel title does not name the source: "${title}"`);
    assert(cited.length > 0, 'the chunk panel shows no cited text');
    assert(docChunks > 0, 'the chunk panel lists no chunks of the cited document');
    assert(await highlighted.count() === 1, 'no chunk of the document is highlighted as the cited one');
    const hlText = (await highlighted.innerText()).trim();
    assert(hlText.length > 0, 'the highlighted chunk is empty');
    log(`ok   citation: panel shows ${title}, ${docChunks} chunks, cited one highlighted (${cited.length} chars)`);
    await page.screenshot({ path: path.join(shotDir, 'chat.png'), fullPage: false });

    step = 'refusal';
    const q2 = '今天天气怎么样，股票会涨吗？';
    const a2 = await ask(q2);
    const refusal = a2.getByTestId('refusal');
    const route2 = (await a2.getByTestId('route').innerText().catch(() => '')).trim();
    if (await refusal.count() === 0) {
      const text = (await a2.innerText()).trim();
      throw new Failure(`the out-of-scope question "${q2}" was answered instead of refused (${route2}): ${text.slice(0, 300)}`);
    }
    assert(await refusal.isVisible(), 'the refusal is not visible');
    const kind = await refusal.getAttribute('data-kind');
    const rtext = (await refusal.innerText()).trim();
    assert(kind, 'the refusal shows no kind');
    assert(rtext.toLowerCase().includes(kind.toLowerCase()), `the refusal does not display its kind "${kind}": ${rtext}`);
    if (kind !== 'out_of_scope') log(`note refusal kind is ${kind}, not out_of_scope`);
    log(`ok   refusal: "${q2}" → refused (${kind}); ${route2}`);
    await bannerClear();
    await page.screenshot({ path: path.join(shotDir, 'chat-refusal.png'), fullPage: false });

    step = 'markdown';
    const noInjection = async (locator, where) => {
      const found = await locator.evaluate(injectedIn);
      assert(found.length === 0, `${where}: knowledge text became markup: ${found.join(', ')}`);
    };
    const literal = async (locator, where) => {
      const text = await locator.innerText();
      for (const s of ['<img src=x onerror=alert(1)>', '<script>window.__xss = 1</script>']) {
        assert(text.includes(s), `${where} does not show "${s}" as text: ${text.slice(0, 300)}`);
      }
    };
    // The page's answer and the cited document come from the server, rewritten to carry the
    // hostile passage (see INJECTED).
    await page.route('**/v1/chat/completions', async (route) => {
      let body = null;
      try { body = route.request().postDataJSON(); } catch (_) { /* not JSON */ }
      const last = body && Array.isArray(body.messages) ? body.messages[body.messages.length - 1] : null;
      if (!last || last.content !== MD_QUESTION) return route.continue();
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: fakeStream(MD_ANSWER, MD_CITATIONS) });
    });
    await page.route('**/v1/skills/router-faq/sources/**', async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      if (Array.isArray(json.chunks)) json.chunks.push({ ordinal: 9999, heading: 'Injected', text: INJECTED, pages: null });
      return route.fulfill({ response, json });
    });
    await byId('chat-clear').click();
    const a3 = await ask(MD_QUESTION);
    const bubble = a3.locator('.bubble');
    assert(await bubble.locator('table').count() === 1, `the Markdown table in the answer is not a <table>: ${await bubble.innerHTML()}`);
    assert(await bubble.locator('table th').count() === 2, 'the answer table has no header row of two cells');
    assert(await bubble.locator('ol > li').count() === 2 && await bubble.locator('ul > li').count() === 2,
      `the answer's lists are not <ol>/<ul> with <li>: ${await bubble.innerHTML()}`);
    assert(await bubble.locator('strong').first().innerText() === 'Reset', 'the answer\'s **Reset** is not bold');
    assert(await bubble.locator('em').count() === 1, 'the answer\'s *10 seconds* is not italic');
    const mdLinks = bubble.getByTestId('citation-link');
    const ns = await mdLinks.evaluateAll((ls) => ls.map((l) => l.dataset.n));
    assert(ns.join(',') === '1,1,2,2', `citation links in the Markdown answer are [${ns.join(',')}], expected [1,1,2,2] (in prose and in the table)`);
    assert(await bubble.locator('table [data-testid="citation-link"]').count() === 1, 'the citation marker in the table is not a link');
    assert(await bubble.locator('code').innerText() === '[1]' && await bubble.locator('code a').count() === 0,
      'a citation marker inside inline code was changed');
    await noInjection(bubble, 'the answer');
    await literal(bubble, 'the answer');
    assert((await bubble.innerText()).includes('[x](javascript:alert(1))'), 'the javascript: link is not shown as plain text');
    const manual = bubble.locator('a[href="https://example.com/manual"]');
    assert(await manual.count() === 1 && await manual.getAttribute('rel') === 'noopener noreferrer',
      'the https link in the answer is not a link that opens without access to the page');
    assert(await bubble.locator('.md-link').innerText() === 'setup', 'the relative link is not shown as its label');
    assert(await bubble.locator('a[href="http://192.168.50.1/faq"]').count() === 1, 'the bare http URL in the answer is not a link');
    assert(await bubble.locator('a[href*="faq.md"]').count() === 0, 'the file name faq.md became a link to a domain');
    log('ok   markdown answer: table, ordered and bullet lists, bold, italic, an https link, 4 citation links (one in the table, none in code); injected HTML shown as text');

    await bubble.locator('table').getByTestId('citation-link').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="chunk-doc"] [data-testid="doc-chunk"][data-cited="true"]'), null, { timeout: 15_000 })
      .catch(() => { throw new Failure('the cited document with the injected chunk did not load'); });
    await bannerClear();
    const citedBox = byId('chunk-cited');
    assert(await citedBox.locator('table').count() === 1, 'the cited passage\'s Markdown table is not a <table>');
    await noInjection(byId('chunk-panel'), 'the chunk panel');
    await literal(citedBox, 'the cited passage');
    const injectedChunk = panel.locator('[data-testid="doc-chunk"][data-ordinal="9999"]');
    assert(await injectedChunk.getAttribute('data-cited') === 'true', 'the injected chunk is not the highlighted one');
    await literal(injectedChunk, 'the injected chunk');
    // The demo's own troubleshooting.md: its factory reset steps and LED table, as rendered.
    const realTables = await panel.locator('[data-testid="doc-chunk"]:not([data-ordinal="9999"]) table').count();
    const realItems = await panel.locator('[data-testid="doc-chunk"]:not([data-ordinal="9999"]) li').count();
    assert(realTables > 0, 'no chunk of troubleshooting.md shows its LED table as a <table>');
    assert(realItems > 0, 'no chunk of troubleshooting.md shows its steps as <li>');
    log(`ok   markdown passages: chunk panel renders troubleshooting.md (${realTables} tables, ${realItems} list items); injected passage shown as text`);
    await page.screenshot({ path: path.join(shotDir, 'chat-markdown.png'), fullPage: false });
    await page.unroute('**/v1/chat/completions');
    await page.unroute('**/v1/skills/router-faq/sources/**');
    await byId('chat-clear').click();

    // ------------------------------------------------------------------------------- picture
    step = 'picture';
    const pictureRequests = [];
    await page.route('**/v1/chat/completions', async (route) => {
      let body = null;
      try { body = route.request().postDataJSON(); } catch (_) { /* not JSON */ }
      const last = body && Array.isArray(body.messages) ? body.messages[body.messages.length - 1] : null;
      if (!last || last.content !== PICTURE_QUESTION) return route.continue();
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: fakeStream(PICTURE_ANSWER, PICTURE_CITATIONS) });
    });
    await page.route('**/v1/skills/router-faq/sources/knowledge/*.{png,tiff}', (route) => route.fulfill({
      status: 200, contentType: 'application/json',
      json: { skill: 'router-faq', source: 'knowledge/notice.png', chunks: [{ chunk_id: 1, ordinal: 0, heading: '办公室开放时间通知', text: PICTURE_TEXT, pages: null }] },
    }));
    await page.route('**/v1/skills/router-faq/pictures/**', (route) => {
      pictureRequests.push(new URL(route.request().url()).pathname);
      return route.fulfill({ status: 200, contentType: 'image/png', headers: { 'x-content-type-options': 'nosniff' }, body: PICTURE_PNG });
    });
    const a4 = await ask(PICTURE_QUESTION);
    await a4.locator('.bubble').getByTestId('citation-link').first().click();
    const thumb = byId('chunk-picture').getByTestId('picture-thumb');
    await thumb.waitFor({ state: 'visible' }).catch(() => { throw new Failure('the cited picture shows no thumbnail in the panel'); });
    await page.waitForFunction((img) => img.complete && img.naturalWidth > 0, await thumb.elementHandle(), { timeout: 15_000 })
      .catch(() => { throw new Failure('the thumbnail did not load (the page CSP must let it)'); });
    await page.waitForFunction(() => document.querySelector('[data-testid="chunk-doc"] [data-testid="doc-chunk"]'), null, { timeout: 15_000 });
    await bannerClear();
    assert(await thumb.getAttribute('alt') === '办公室开放时间通知', `the thumbnail's alt is "${await thumb.getAttribute('alt')}", not the citation's heading`);
    assert(await thumb.getAttribute('loading') === 'lazy', 'the thumbnail does not load lazily');
    const thumbBox = await thumb.boundingBox();
    assert(thumbBox && thumbBox.width <= 240 && thumbBox.width > 100, `the thumbnail is ${thumbBox && thumbBox.width} px wide, not at most 240`);
    assert(Math.abs(thumbBox.width / thumbBox.height - 1200 / 520) < 0.05, 'the thumbnail does not keep the picture\'s proportions');
    const meta = await byId('chunk-picture').innerText();
    assert(meta.includes('1200×520'), `the panel does not give the picture's size: ${meta}`);
    assert(pictureRequests.includes('/v1/skills/router-faq/pictures/knowledge/notice.png'), `the picture was not loaded from its endpoint: ${pictureRequests.join(', ')}`);
    await page.screenshot({ path: path.join(shotDir, 'chat-picture.png'), fullPage: false });
    await thumb.click();
    const full = byId('picture-full');
    await byId('picture-view').waitFor({ state: 'visible' }).catch(() => { throw new Failure('clicking the thumbnail did not open the whole picture'); });
    await page.waitForFunction((img) => img.complete && img.naturalWidth === 1200, await full.elementHandle(), { timeout: 15_000 })
      .catch(() => { throw new Failure('the whole picture did not load at 1200 px'); });
    assert((await full.boundingBox()).width === 1200, 'the whole picture is not shown at its own size');
    await page.screenshot({ path: path.join(shotDir, 'chat-picture-full.png'), fullPage: false });
    await page.keyboard.press('Escape');
    await byId('picture-view').waitFor({ state: 'hidden' });
    assert(await byId('chunk-panel').isVisible(), 'Escape on the picture closed the citation panel too');
    log(`ok   picture: thumbnail ${Math.round(thumbBox.width)}×${Math.round(thumbBox.height)} in the panel, the whole 1200×520 picture in a dialog`);
    // A TIFF, which browsers do not show: a link to the file instead of a thumbnail.
    await a4.locator('.bubble').getByTestId('citation-link').nth(1).click();
    const tiff = byId('chunk-picture').getByTestId('picture-link');
    await tiff.waitFor({ state: 'visible' }).catch(() => { throw new Failure('the cited TIFF shows no link'); });
    assert(await tiff.getAttribute('href') === '/v1/skills/router-faq/pictures/knowledge/signed.tiff', `the TIFF link goes to ${await tiff.getAttribute('href')}`);
    assert(await byId('chunk-picture').getByTestId('picture-thumb').count() === 0, 'a TIFF got a thumbnail');
    log('ok   picture: a cited TIFF is a download link');
    await page.unroute('**/v1/chat/completions');
    await page.unroute('**/v1/skills/router-faq/sources/knowledge/*.{png,tiff}');
    await page.unroute('**/v1/skills/router-faq/pictures/**');
    await byId('chunk-close').click();
    await byId('chat-clear').click();

    // ----------------------------------------------------------------------------- retrieval
    step = 'retrieval';
    await byId('tab-retrieval').click();
    await byId('view-retrieval').waitFor({ state: 'visible' });
    await page.locator('[data-testid="search-skill"] option[value="labor-law"]').waitFor({ state: 'attached' });
    await byId('search-input').fill('试用期最长多久');
    await byId('search-skill').selectOption('labor-law');
    await byId('search-mode').selectOption('hybrid');
    await byId('search-run').click();
    const hitRows = byId('hits-table').getByTestId('hit-row');
    await hitRows.first().waitFor({ state: 'visible', timeout: 30_000 }).catch(async () => {
      const banner = (await byId('error-banner').isVisible()) ? await byId('error-text').textContent() : 'no error shown';
      throw new Failure(`the hits table got no rows (${banner})`);
    });
    const nHits = await hitRows.count();
    const headers = (await byId('hits-table').locator('thead th').allInnerTexts()).map((h) => h.trim());
    for (const col of ['bm25', 'dense', 'fused', 'rerank', 'skill', 'source', 'heading']) {
      assert(headers.includes(col), `the hits table has no ${col} column (columns: ${headers.join(', ')})`);
    }
    const col = (name) => headers.indexOf(name);
    const firstCells = await hitRows.first().locator('td').allInnerTexts();
    assert(firstCells[col('skill')].trim() === 'labor-law', `first hit is not from labor-law: ${firstCells[col('skill')]}`);
    assert(/\d/.test(firstCells[col('bm25')]), `the first hit shows no bm25 score: "${firstCells[col('bm25')]}"`);
    assert(/\d/.test(firstCells[col('fused')]), `the first hit shows no fused score: "${firstCells[col('fused')]}"`);
    const allSkills = await hitRows.evaluateAll((rows) => rows.map((r) => r.dataset.skill));
    assert(allSkills.every((s) => s === 'labor-law'), `search restricted to labor-law returned hits of ${[...new Set(allSkills)].join(', ')}`);
    // The text is expandable.
    const details = hitRows.first().locator('details');
    await details.locator('summary').click();
    assert(await details.getAttribute('open') !== null, 'the hit text does not expand');
    const routeRows = byId('route-table').getByTestId('route-row');
    const routeSkills = await routeRows.evaluateAll((rows) => rows.map((r) => r.dataset.skill));
    assert(routeRows && routeSkills.length === SKILLS.length, `the route table has ${routeSkills.length} rows, expected one per skill (${SKILLS.length})`);
    for (const s of SKILLS) assert(routeSkills.includes(s), `the route table has no row for ${s}`);
    const routeHeaders = (await byId('route-table').locator('thead th').allInnerTexts()).map((h) => h.trim());
    for (const c of ['score', 'keyword_hits', 'dense', 'profile', 'vocabulary', 'knowledge', 'knowledge_dense']) {
      assert(routeHeaders.includes(c), `the route table has no ${c} column`);
    }
    const summary = (await byId('route-summary').innerText()).trim();
    assert(summary.includes('labor-law'), `the route decision does not name labor-law: ${summary}`);
    log(`ok   retrieval: ${nHits} hits (first: bm25 ${firstCells[col('bm25')].replace(/\s+/g, ' ')}, fused ${firstCells[col('fused')].replace(/\s+/g, ' ')}); route: ${summary}`);
    await bannerClear();
    await page.screenshot({ path: path.join(shotDir, 'retrieval.png'), fullPage: true });

    // The hits' text as Markdown: the demo's LED table as it is indexed, and an injected hit.
    step = 'retrieval-markdown';
    const MD_QUERY = 'blinking amber LED meaning';
    await page.route('**/v1/search', async (route) => {
      let body = null;
      try { body = route.request().postDataJSON(); } catch (_) { /* not JSON */ }
      if (!body || body.query !== MD_QUERY) return route.continue();
      const response = await route.fetch();
      const json = await response.json();
      if (Array.isArray(json.hits)) {
        json.hits.push({ skill: 'router-faq', source: 'knowledge/injected.md', heading: 'Injected', ordinal: 0,
          text: INJECTED, scores: {}, ranks: {} });
      }
      return route.fulfill({ response, json });
    });
    await byId('search-input').fill(MD_QUERY);
    await byId('search-skill').selectOption('router-faq');
    await byId('search-run').click();
    const injectedRow = page.locator('[data-testid="hit-row"][data-source="knowledge/injected.md"]');
    await injectedRow.waitFor({ state: 'attached', timeout: 30_000 }).catch(() => { throw new Failure(`the search "${MD_QUERY}" showed no hits`); });
    await bannerClear();
    const ledTable = byId('hits-table').locator('[data-testid="hit-row"]:not([data-source="knowledge/injected.md"]) [data-testid="hit-text"] table')
      .filter({ hasText: 'Blinking amber' });
    assert(await ledTable.count() > 0, 'no hit shows the LED table of troubleshooting.md as a <table>');
    await injectedRow.locator('details summary').click();
    const injectedText = injectedRow.getByTestId('hit-text');
    assert(await injectedText.isVisible(), 'the injected hit\'s text does not expand');
    await noInjection(byId('hits-table'), 'the hits table');
    await literal(injectedText, 'the injected hit');
    log(`ok   retrieval markdown: the LED table renders as <table>; injected hit shown as text`);
    await page.screenshot({ path: path.join(shotDir, 'retrieval-markdown.png'), fullPage: true });
    await page.unroute('**/v1/search');

    // --------------------------------------------------------------------------------- index
    step = 'index';
    await byId('tab-index').click();
    await byId('view-index').waitFor({ state: 'visible' });
    const skillRows = byId('skills-table').getByTestId('skill-row');
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="skill-row"]').length >= n, SKILLS.length)
      .catch(() => { throw new Failure('the index table did not list the skills'); });
    const rowSkills = await skillRows.evaluateAll((rows) => rows.map((r) => r.dataset.skill));
    assert(rowSkills.length === SKILLS.length, `the index table has ${rowSkills.length} rows, expected ${SKILLS.length}: ${rowSkills.join(', ')}`);
    for (const s of SKILLS) assert(rowSkills.includes(s), `the index table has no row for ${s}`);
    const previousJob = await byId('index-job').getAttribute('data-job');
    await byId('reindex-all').click();
    const job = byId('index-job');
    await page.waitForFunction((prev) => {
      const el = document.querySelector('[data-testid="index-job"]');
      return el && el.dataset.job && el.dataset.job !== prev && (el.dataset.state === 'done' || el.dataset.state === 'failed');
    }, previousJob, { timeout: INDEX_TIMEOUT, polling: 250 }).catch(async () => {
      const text = (await job.isVisible()) ? (await job.innerText()).trim() : 'no job shown';
      const banner = (await byId('error-banner').isVisible()) ? await byId('error-text').textContent() : '';
      throw new Failure(`the re-index did not finish within ${INDEX_TIMEOUT / 1000} s: ${text} ${banner}`);
    });
    const jobState = await job.getAttribute('data-state');
    const jobText = (await job.innerText()).trim().replace(/\s+/g, ' ');
    assert(jobState === 'done', `the re-index ended ${jobState}: ${jobText}`);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="skill-row"]').length === n, SKILLS.length);
    await bannerClear();
    log(`ok   index: re-index all → done: ${jobText.slice(0, 200)}`);
    await page.screenshot({ path: path.join(shotDir, 'index.png'), fullPage: true });

    step = 'end';
    assert(jsErrors.length === 0, `JavaScript errors on the page:\n  ${jsErrors.join('\n  ')}`);
    assert(dialogs.length === 0, `injected script ran (dialogs):\n  ${dialogs.join('\n  ')}`);
    assert(await page.evaluate(() => window.__xss === undefined), 'injected script ran (window.__xss is set)');
    if (networkErrors.length) log(`note non-2xx responses seen by the page:\n  ${networkErrors.join('\n  ')}`);
    log(`PASS web e2e (${base}); screenshots in ${shotDir}`);
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  if (err instanceof Failure) console.error(`FAIL [${step}]: ${err.message}`);
  else console.error(`FAIL [${step}]: ${err && err.stack ? err.stack : err}`);
  if (jsErrors.length) console.error(`JavaScript errors on the page:\n  ${jsErrors.join('\n  ')}`);
  process.exit(1);
});
