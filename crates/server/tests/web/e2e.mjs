// Browser end-to-end test of the `skillrag serve` web page.
//
//   eval "$(scripts/setup-test-clients)"
//   NODE_PATH="$SKILLRAG_TEST_NODE_PATH" node crates/server/tests/web/e2e.mjs http://127.0.0.1:18080 docs/screenshots
//
// The server must serve the example project of `skillrag init` (labor-law, router-faq,
// tea-brewing), indexed, and take writes (`skillrag serve --allow-writes`): the test uploads
// SKILLRAG_E2E_DOCX into router-faq and SKILLRAG_E2E_PDF into tea-brewing (default: testdata's
// guide.docx and manual.pdf), asks from the PDF, deletes the DOCX, and leaves feedback and a
// renamed conversation ("Tea questions") behind for the caller to check through the API. With
// SKILLRAG_API_TOKEN set, the test expects the page to ask for the token and types it in.
// Exits 1 with a message on the first failed check.
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
const testdata = (rel) => new URL(`../../../../testdata/${rel}`, import.meta.url).pathname;
const DOCX = process.env.SKILLRAG_E2E_DOCX || testdata('documents/guide.docx');
const PDF = process.env.SKILLRAG_E2E_PDF || testdata('documents/manual.pdf');
// A new version of the PDF (the same manual, its Chinese in a CID font), uploaded over it.
const PDF_V2 = process.env.SKILLRAG_E2E_PDF_V2 || testdata('documents/manual-cid.pdf');
// Answered from the PDF's English text only (the demo's tea knowledge is in Chinese).
const PDF_QUESTION = 'How many grams of Keemun black tea go into a gaiwan?';
// Asked of the wrong skill on purpose, then rated 👎 with the right one named.
const MISROUTED_QUESTION = 'How should I store white tea?';
const CONVERSATION_TITLE = 'Tea questions';
// A new skill's document of two chunks: the first is rewritten from the page, the second disabled.
const ESPRESSO_GUIDE = [
  '# Espresso at home', '',
  '## Grinding', '',
  'Espresso needs a fine, even grind so that the water meets enough resistance in the basket. Grind just before brewing, '
    + 'adjust the grinder one step at a time, and judge each change by the time the shot takes to run. Stale or uneven '
    + 'grounds channel, and the shot tastes thin and sour however long it runs.', '',
  '## Milk', '',
  'Steam the milk in a cold pitcher, the steam wand just below the surface until the milk has grown by a third, then '
    + 'lower it to spin the milk into a smooth microfoam. Stop at about sixty degrees: hotter milk loses its sweetness, '
    + 'and the microfoam turns dry and stiff instead of glossy and pourable.', '',
].join('\n');
const COLD_BREW_QUESTION = 'How long does cold brew steep in the fridge?';
const COLD_BREW_ANSWER = 'Cold brew steeps 12 to 18 hours in the fridge, then it is filtered.';
const EDITED_CHUNK = 'For espresso, grind the beans fine, like table salt, and pull 18 g in 25 to 30 seconds.';

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
const STOP_QUESTION = 'stop button check';
const PICTURE_PNG = fs.readFileSync(new URL('../../../../testdata/scans/notice-zh.png', import.meta.url));
const PICTURE_TEXT = '# 办公室开放时间通知\n\n办公室开放时间为周一至周五上午九点到下午五点';
const PICTURE_ANSWER = '办公室开放时间为周一至周五上午九点到下午五点。[1] The signed copy is a TIFF.[2]';
const PICTURE_CITATIONS = [
  { n: 1, skill: 'router-faq', source: 'knowledge/notice.png', heading: '办公室开放时间通知', pages: null, text: PICTURE_TEXT,
    image: { path: 'knowledge/notice.png', width: 1200, height: 520, bytes: PICTURE_PNG.length } },
  { n: 2, skill: 'router-faq', source: 'knowledge/signed.tiff', heading: 'Signed notice', pages: null, text: 'Signed.',
    image: { path: 'knowledge/signed.tiff', width: 2400, height: 1040, bytes: 123456 } },
];
/**
 * An SSE body like `POST /v1/ask` with `stream: true` sends: `text` events (cut mid-table, so the
 * page renders partial Markdown), then the whole Answer JSON. Like a real Answer, its citations
 * carry no text: the page finds the passage in `context.pieces` by `context_n` (numbered apart
 * from `n` here, so a lookup by the wrong number shows).
 */
function fakeAsk(query, content, citations) {
  const cut = content.indexOf('| Blinking');
  const pieces = cut > 0 ? [content.slice(0, cut), content.slice(cut)] : [content];
  const answer = {
    query, answer_id: 'a-fake', retrieved: true, attempts: 1, hits: [], answer: content, refusal: null,
    route: { skills: ['router-faq'], decision: 'single', confidence: 0.9, candidates: [] },
    citations: citations.map(({ text, ...c }) => ({ ...c, context_n: c.n + 10 })),
    timings_ms: { gate: 0, route: 1, retrieve: 1, generate: 0, total: 2 },
    context: {
      pieces: citations.map((c) => ({ n: c.n + 10, tier: 'references', skill: c.skill, source: c.source, heading: c.heading, chunk_id: c.n, text: c.text })),
      dropped: [], budget: 4000, used: 0, unit: 'chars',
    },
  };
  return `${pieces.map((p) => `event: text\ndata: ${JSON.stringify({ text: p })}\n\n`).join('')}event: answer\ndata: ${JSON.stringify(answer)}\n\n`;
}

/** Answers a /v1/ask whose query is a key of `answers` with that SSE body; others go to the server. */
async function fakeAnswers(page, answers) {
  await page.route('**/v1/ask', async (route) => {
    let body = null;
    try { body = route.request().postDataJSON(); } catch (_) { /* not JSON */ }
    const fake = body && answers[body.query];
    if (!fake) return route.continue();
    return route.fulfill({ status: 200, contentType: 'text/event-stream', body: fake });
  });
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

/**
 * Chromium now and then dies while it starts, before any page exists (CI once saw a SIGSEGV at
 * launch on a loaded machine). That says nothing about the page under test, so the launch alone
 * is tried up to three times; every later failure still fails the test.
 */
async function launchBrowser() {
  const options = {
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await chromium.launch(options);
    } catch (err) {
      if (attempt >= 3) throw err;
      log(`note Chromium did not start (try ${attempt} of 3): ${String(err && err.message).split('\n')[0]}`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

async function main() {
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    // The Copy button writes the clipboard; the test reads it back.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
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

    step = 'copy';
    const copy = a1.getByTestId('answer-copy');
    await copy.click();
    await page.waitForFunction((el) => el.dataset.copied === 'true', await copy.elementHandle())
      .catch(() => { throw new Failure('the Copy button did not confirm the copy'); });
    await bannerClear();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert(copied.length > 20 && copied.includes('router-faq/knowledge/'), `the clipboard does not hold the answer with its sources: ${copied.slice(0, 300)}`);
    log(`ok   copy: the answer and its sources are on the clipboard (${copied.length} chars)`);

    step = 'stop';
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    await page.route('**/v1/ask', async (route) => {
      let body = null;
      try { body = route.request().postDataJSON(); } catch (_) { /* not JSON */ }
      if (!body || body.query !== STOP_QUESTION) return route.continue();
      await held; // never answered: the page's Stop ends it
      await route.abort().catch(() => {});
    });
    const beforeStop = await answers.count();
    await byId('chat-input').fill(STOP_QUESTION);
    await byId('send').click();
    await byId('stop').waitFor({ state: 'visible' }).catch(() => { throw new Failure('no Stop button while the answer streams'); });
    assert(!await byId('send').isVisible(), 'Send is offered while an answer streams');
    await byId('stop').click();
    const stopped = answers.nth(beforeStop);
    await page.waitForFunction((el) => el.dataset.state === 'stopped', await stopped.elementHandle(), { timeout: 10_000 })
      .catch(async () => { throw new Failure(`Stop did not end the answer (state ${await stopped.getAttribute('data-state')})`); });
    assert(await byId('send').isVisible() && !await byId('stop').isVisible(), 'after Stop, Send is not back');
    assert((await stopped.innerText()).includes('(stopped)'), 'the stopped answer does not say so');
    await bannerClear();
    release();
    await page.unroute('**/v1/ask');
    log('ok   stop: Stop aborts a streaming answer; Send is back');

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
    await fakeAnswers(page, { [MD_QUESTION]: fakeAsk(MD_QUESTION, MD_ANSWER, MD_CITATIONS) });
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
    await page.unroute('**/v1/ask');
    await page.unroute('**/v1/skills/router-faq/sources/**');
    await byId('chat-clear').click();

    // ------------------------------------------------------------------------------- picture
    step = 'picture';
    const pictureRequests = [];
    await fakeAnswers(page, { [PICTURE_QUESTION]: fakeAsk(PICTURE_QUESTION, PICTURE_ANSWER, PICTURE_CITATIONS) });
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
    await page.unroute('**/v1/ask');
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
    for (const c of ['score', 'keyword_hits', 'dense', 'profile', 'specificity', 'knowledge', 'knowledge_dense']) {
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

    // Threshold, weights and filters go with the search; hits under the threshold are counted.
    step = 'retrieval-controls';
    await byId('search-input').fill('试用期最长多久');
    await byId('search-skill').selectOption('labor-law');
    await byId('search-min-score').fill('0.3');
    await byId('search-bm25-weight').fill('1');
    await byId('search-dense-weight').fill('0.5');
    await byId('search-source').fill('knowledge/*');
    await byId('search-dir').fill('knowledge');
    await byId('search-doctype-general').check();
    await byId('search-doctype-legal').check();
    const [searchRequest] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/v1/search') && r.method() === 'POST'),
      byId('search-run').click(),
    ]);
    const sent = searchRequest.postDataJSON();
    const want = { min_score: 0.3, bm25_weight: 1, dense_weight: 0.5, source: 'knowledge/*', dir: 'knowledge' };
    for (const [key, value] of Object.entries(want)) assert(sent[key] === value, `the search sent ${key}=${JSON.stringify(sent[key])}, not ${value}`);
    assert(JSON.stringify(sent.doc_types) === '["general","legal"]', `the search sent doc_types ${JSON.stringify(sent.doc_types)}`);
    const searched = await searchRequest.response();
    const result = await searched.json();
    assert(searched.ok(), `the search with controls answered ${searched.status()}: ${JSON.stringify(result).slice(0, 300)}`);
    await page.waitForFunction(() => !document.querySelector('[data-testid="search-run"]').disabled);
    await bannerClear();
    const shownHits = await byId('hits-table').getByTestId('hit-row').count();
    assert(shownHits === (result.hits || []).length, `the page shows ${shownHits} hits, the server sent ${(result.hits || []).length}`);
    if (typeof result.filtered === 'number') {
      const filtered = byId('search-filtered');
      assert(await filtered.getAttribute('data-n') === String(result.filtered), `the page does not show the ${result.filtered} hits dropped by min_score`);
    }
    log(`ok   retrieval controls: min_score, weights, source, dir and doc_types sent; ${shownHits} hits, ${result.filtered ?? 'no'} filtered`);
    await page.screenshot({ path: path.join(shotDir, 'retrieval-controls.png'), fullPage: false });
    await byId('search-reset').click();
    assert(await byId('search-min-score').inputValue() === '' && !await byId('search-doctype-legal').isChecked(), 'Reset left the controls set');


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
    const reportRows = await job.getByTestId('job-skill-row').evaluateAll((rows) => rows.map((r) => r.dataset.skill));
    for (const s of SKILLS) assert(reportRows.includes(s), `the re-index report has no row for ${s}: ${jobText.slice(0, 300)}`);
    assert(await job.locator('pre').count() === 0, 'the re-index report is a raw JSON dump');
    assert(await job.getByTestId('job-diagnostics').count() + await job.locator('.diag-head').count() > 0, 'the report has no diagnostics part');
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="skill-row"]').length === n, SKILLS.length);
    await bannerClear();
    log(`ok   index: re-index all → done: ${jobText.slice(0, 200)}`);
    await page.screenshot({ path: path.join(shotDir, 'index.png'), fullPage: true });

    // ----------------------------------------------------------------------------- documents
    step = 'documents';
    const docRows = byId('docs-table').getByTestId('doc-row');
    const docRow = (name) => page.locator(`[data-testid="doc-row"][data-name="${name}"]`);
    /** The row of `name` once the list shows it indexed (it shows `pending` while the re-index runs). */
    const indexedRow = async (name, what) => {
      const row = page.locator(`[data-testid="doc-row"][data-name="${name}"][data-status="indexed"]`);
      await row.waitFor({ state: 'attached' }).catch(async () => {
        const status = (await docRow(name).count()) ? await docRow(name).getAttribute('data-status') : 'not listed';
        throw new Failure(`${what}: ${name} is ${status}, not indexed`);
      });
      return row;
    };
    const openDocuments = async (skill) => {
      await byId('tab-documents').click();
      await byId('view-documents').waitFor({ state: 'visible' });
      await page.locator(`[data-testid="docs-skill"] option[value="${skill}"]`).waitFor({ state: 'attached' });
      if (await byId('docs-skill').inputValue() !== skill) await byId('docs-skill').selectOption(skill);
      await page.waitForFunction((s) => document.querySelector('[data-testid="docs-table"]').dataset.skill === s, skill)
        .catch(() => { throw new Failure(`the documents of ${skill} were not listed`); });
    };
    /** Waits for a re-index other than `previous` to finish in the Documents tab; fails unless done. */
    const waitDocsJob = async (previous, what) => {
      const box = byId('docs-job');
      await page.waitForFunction((prev) => {
        const el = document.querySelector('[data-testid="docs-job"]');
        return el && el.dataset.job && el.dataset.job !== prev && (el.dataset.state === 'done' || el.dataset.state === 'failed');
      }, previous, { timeout: INDEX_TIMEOUT, polling: 250 }).catch(async () => {
        const text = (await box.isVisible()) ? (await box.innerText()).trim() : 'no job shown';
        const banner = (await byId('error-banner').isVisible()) ? await byId('error-text').textContent() : '';
        throw new Failure(`${what}: no finished re-index within ${INDEX_TIMEOUT / 1000} s: ${text} ${banner}`);
      });
      const text = (await box.innerText()).trim().replace(/\s+/g, ' ');
      assert(await box.getAttribute('data-state') === 'done', `${what}: the re-index failed: ${text}`);
      return text;
    };

    await openDocuments('router-faq');
    assert(await byId('docs-readonly').isHidden(), 'the page says writes are off, but the server takes them (--allow-writes)');
    assert(await byId('docs-file').isEnabled(), 'the upload input is disabled on a server that takes writes');
    const listed = await docRows.evaluateAll((rows) => rows.map((r) => r.dataset.name));
    assert(listed.includes('knowledge/faq.md'), `router-faq's documents do not list knowledge/faq.md: ${listed.join(', ')}`);
    const headers2 = (await byId('docs-table').locator('thead th').allInnerTexts()).map((h) => h.trim());
    for (const c of ['name', 'format', 'size', 'encoding', 'pages', 'chunks', 'last indexed', 'status', 'errors']) {
      assert(headers2.includes(c), `the documents table has no ${c} column`);
    }
    const faqRow = await docRow('knowledge/faq.md').locator('td').allInnerTexts();
    assert(/\d/.test(faqRow[headers2.indexOf('chunks')]) && /20\d\d-/.test(faqRow[headers2.indexOf('last indexed')]),
      `knowledge/faq.md shows no chunk count or time of indexing: ${faqRow.join(' | ')}`);

    // The filter narrows the list by name or title.
    await byId('docs-filter').fill('faq');
    const filtered = await docRows.evaluateAll((rows) => rows.map((r) => r.dataset.name));
    assert(filtered.length >= 1 && filtered.every((n) => /faq/i.test(n)), `filtering by "faq" lists ${filtered.join(', ')}`);
    await byId('docs-filter').fill('');
    assert(await docRows.count() === listed.length, 'clearing the filter does not list every document again');

    // A type no format reads: refused with a clear message, nothing sent.
    await byId('docs-file').setInputFiles({ name: 'notes.exe', mimeType: 'application/octet-stream', buffer: Buffer.from('MZ not a document') });
    await byId('error-banner').waitFor({ state: 'visible' }).catch(() => { throw new Failure('uploading notes.exe showed no error'); });
    const refusedUpload = await byId('error-text').textContent();
    assert(/notes\.exe/.test(refusedUpload) && /cannot be indexed|not a supported|unsupported/i.test(refusedUpload), `the error for notes.exe does not say why: ${refusedUpload}`);
    await byId('error-close').click();
    log(`ok   documents: router-faq lists ${listed.length} documents; an .exe upload is refused: ${refusedUpload.replace(/\s+/g, ' ').slice(0, 120)}`);

    // The DOCX through the file input.
    step = 'upload-docx';
    const docxName = `knowledge/${path.basename(DOCX)}`;
    let previousDocsJob = await byId('docs-job').getAttribute('data-job');
    await byId('docs-file').setInputFiles(DOCX);
    const docxJob = await waitDocsJob(previousDocsJob, `uploading ${docxName}`);
    const docxChunks = Number(await (await indexedRow(docxName, 'after its upload')).getAttribute('data-chunks'));
    assert(docxChunks > 0, `${docxName} has no chunks`);
    assert(await byId('docs-job').locator('[data-testid="job-skill-row"][data-skill="router-faq"]').count() === 1, `the upload's re-index report has no row for router-faq: ${docxJob}`);
    await bannerClear();
    log(`ok   upload DOCX: ${docxName} indexed, ${docxChunks} chunks; ${docxJob.slice(0, 160)}`);

    // The PDF dropped on the drop zone.
    step = 'upload-pdf';
    await openDocuments('tea-brewing');
    const pdfName = `knowledge/${path.basename(PDF)}`;
    previousDocsJob = await byId('docs-job').getAttribute('data-job');
    const dropped = Date.now();
    const dataTransfer = await page.evaluateHandle(({ b64, name }) => {
      const bin = atob(b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i += 1) bytes[i] = bin.charCodeAt(i);
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type: 'application/pdf' }));
      return dt;
    }, { b64: fs.readFileSync(PDF).toString('base64'), name: path.basename(PDF) });
    await byId('docs-drop').dispatchEvent('dragenter', { dataTransfer });
    await byId('docs-drop').dispatchEvent('drop', { dataTransfer });
    await waitDocsJob(previousDocsJob, `dropping ${pdfName}`);
    const indexedMs = Date.now() - dropped;
    const pdfChunks = Number(await (await indexedRow(pdfName, 'after it was dropped')).getAttribute('data-chunks'));
    const pdfCells = await docRow(pdfName).locator('td').allInnerTexts();
    assert(pdfChunks > 0, `${pdfName} has no chunks`);
    assert(/pdf/i.test(pdfCells[headers2.indexOf('format')]), `${pdfName}'s format is "${pdfCells[headers2.indexOf('format')]}"`);
    assert(/\d/.test(pdfCells[headers2.indexOf('pages')]), `${pdfName} shows no page count: ${pdfCells.join(' | ')}`);

    await docRow(pdfName).getByTestId('doc-open').click();
    await byId('docs-chunks').waitFor({ state: 'visible' }).catch(() => { throw new Failure('clicking a document did not open its chunks'); });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="docs-chunk"]').length > 0, null, { timeout: 15_000 })
      .catch(() => { throw new Failure(`the chunks of ${pdfName} did not load`); });
    await bannerClear();
    const pdfChunkTexts = await byId('docs-chunks').getByTestId('docs-chunk').allInnerTexts();
    assert(pdfChunkTexts.length === pdfChunks, `the panel shows ${pdfChunkTexts.length} chunks, the table says ${pdfChunks}`);
    assert(pdfChunkTexts.join('\n').includes('Keemun'), 'the chunks of the PDF do not show its text');
    assert((await byId('docs-chunks-title').innerText()).includes(`tea-brewing/${pdfName}`), 'the chunk panel does not name the document');
    log(`ok   upload PDF (dropped): ${pdfName} indexed in ${(indexedMs / 1000).toFixed(1)} s, ${pdfChunks} chunks shown in the panel`);
    await page.screenshot({ path: path.join(shotDir, 'documents.png'), fullPage: false });

    // A new version under the same name: the page offers to replace it, and replacing re-indexes it.
    step = 'replace';
    previousDocsJob = await byId('docs-job').getAttribute('data-job');
    await byId('docs-file').setInputFiles({ name: path.basename(PDF), mimeType: 'application/pdf', buffer: fs.readFileSync(PDF_V2) });
    await byId('docs-conflict').waitFor({ state: 'visible' }).catch(() => { throw new Failure('uploading an existing name again did not offer to replace it'); });
    assert((await byId('docs-conflict-text').innerText()).includes(pdfName), 'the conflict does not name the document');
    await byId('docs-replace').click();
    await waitDocsJob(previousDocsJob, `replacing ${pdfName}`);
    await indexedRow(pdfName, 'after its replacement');
    await bannerClear();
    const replacedSize = await docRow(pdfName).locator('td').nth(headers2.indexOf('size')).innerText();
    log(`ok   replace: a second upload of ${pdfName} asks first, then replaces it (now ${replacedSize})`);

    // ------------------------------------------------------------------- answers from uploads
    step = 'chat-uploaded';
    await byId('tab-chat').click();
    await byId('view-chat').waitFor({ state: 'visible' });
    await byId('chat-clear').click();
    await byId('skill-picker').selectOption('tea-brewing');
    const asked = Date.now();
    const a5 = await ask(PDF_QUESTION);
    const answeredMs = Date.now() - asked;
    const a5text = (await a5.innerText()).trim();
    assert(await a5.getByTestId('refusal').count() === 0, `"${PDF_QUESTION}" was refused: ${a5text.slice(0, 300)}`);
    const pdfCites = a5.locator(`.bubble [data-testid="citation-link"][title*="${pdfName}"]`);
    if (await pdfCites.count() === 0) {
      const titles = await a5.getByTestId('citation-link').evaluateAll((ls) => ls.map((l) => l.title));
      throw new Failure(`the answer to "${PDF_QUESTION}" does not cite ${pdfName} (cites: ${titles.join('; ') || 'nothing'}): ${a5text.slice(0, 300)}`);
    }
    await pdfCites.first().click();
    await byId('chunk-panel').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelector('[data-testid="chunk-doc"] [data-testid="doc-chunk"]'), null, { timeout: 15_000 });
    assert((await byId('chunk-title').innerText()).includes(pdfName), 'the citation panel does not show the uploaded PDF');
    assert((await byId('chunk-cited').innerText()).trim().length > 0, 'the cited passage of the PDF is empty');
    await bannerClear();
    const conversationId = await byId('conversation-title').getAttribute('data-id');
    assert(conversationId, 'the conversation has no id after its first question');
    log(`ok   answered from the upload: "${PDF_QUESTION}" cites ${pdfName}; upload to answerable ${((indexedMs + answeredMs) / 1000).toFixed(1)} s (re-index ${(indexedMs / 1000).toFixed(1)} s, answer ${(answeredMs / 1000).toFixed(1)} s)`);
    await byId('chunk-close').click();
    await byId('skill-picker').selectOption('router-faq');
    await ask(MISROUTED_QUESTION);
    await page.locator(`[data-testid="conversation-item"][data-id="${conversationId}"]`).waitFor({ state: 'attached' })
      .catch(() => { throw new Failure('the conversation is not in the list'); });
    const firstItem = await byId('conv-list').getByTestId('conversation-item').first().getAttribute('data-id');
    assert(firstItem === conversationId, 'the newest conversation is not first in the list');

    // ------------------------------------------------------------------------------- delete
    step = 'delete';
    await openDocuments('router-faq');
    previousDocsJob = await byId('docs-job').getAttribute('data-job');
    await docRow(docxName).getByTestId('doc-delete').click();
    await byId('confirm-dialog').waitFor({ state: 'visible' }).catch(() => { throw new Failure('Delete did not ask to confirm'); });
    assert((await byId('confirm-text').innerText()).includes(docxName), 'the confirmation does not name the document');
    await byId('confirm-ok').click();
    await waitDocsJob(previousDocsJob, `deleting ${docxName}`);
    await docRow(docxName).waitFor({ state: 'detached' }).catch(() => { throw new Failure(`${docxName} is still listed after its deletion`); });
    assert(await docRow('knowledge/faq.md').count() === 1, 'deleting one document took others with it');
    await bannerClear();
    log(`ok   delete: ${docxName} is gone after the re-index`);

    // ------------------------------------------------------------------------------- resume
    step = 'resume';
    await page.reload({ waitUntil: 'domcontentloaded' });
    await byId('tab-chat').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="answer"][data-state="done"]').length === 2, null, { timeout: 15_000 })
      .catch(async () => { throw new Failure(`the conversation was not resumed after a reload (${await answers.count()} answers shown)`); });
    const resumed = await byId('chat-log').getByTestId('question').allInnerTexts();
    assert(JSON.stringify(resumed.map((q) => q.trim())) === JSON.stringify([PDF_QUESTION, MISROUTED_QUESTION]), `the resumed turns are ${JSON.stringify(resumed)}`);
    assert(await byId('conversation-title').getAttribute('data-id') === conversationId, 'another conversation was resumed');
    assert(await answers.first().locator(`[data-testid="citation-link"][title*="${pdfName}"]`).count() > 0, 'the resumed answer lost its citations');
    const item = page.locator(`[data-testid="conversation-item"][data-id="${conversationId}"]`);
    assert(await item.evaluate((e) => e.classList.contains('active')), 'the resumed conversation is not marked in the list');
    await bannerClear();
    log(`ok   resume: after a reload, conversation ${conversationId} shows its ${resumed.length} turns`);
    await page.screenshot({ path: path.join(shotDir, 'conversations.png'), fullPage: false });

    step = 'rename';
    await item.hover();
    await item.getByTestId('conversation-rename').click();
    await byId('conversation-title-input').fill(CONVERSATION_TITLE);
    await byId('conversation-title-input').press('Enter');
    await page.waitForFunction((t) => document.querySelector('[data-testid="conversation-title"]').textContent === t, CONVERSATION_TITLE)
      .catch(() => { throw new Failure('the rename did not show'); });
    await page.locator(`[data-testid="conversation-item"][data-id="${conversationId}"] [data-testid="conversation-name"]`).filter({ hasText: CONVERSATION_TITLE })
      .waitFor({ state: 'attached' }).catch(() => { throw new Failure('the list does not show the new title'); });
    await bannerClear();
    log(`ok   rename: the conversation is "${CONVERSATION_TITLE}"`);

    step = 'delete-conversation';
    const items = byId('conv-list').getByTestId('conversation-item');
    const before = await items.count();
    const doomed = items.last();
    const doomedId = await doomed.getAttribute('data-id');
    assert(before > 1 && doomedId !== conversationId, 'no other conversation to delete');
    await doomed.hover();
    await doomed.getByTestId('conversation-delete').click();
    await byId('confirm-dialog').waitFor({ state: 'visible' }).catch(() => { throw new Failure('deleting a conversation did not ask to confirm'); });
    await byId('confirm-ok').click();
    await page.locator(`[data-testid="conversation-item"][data-id="${doomedId}"]`).waitFor({ state: 'detached' })
      .catch(() => { throw new Failure('the deleted conversation is still listed'); });
    assert(await items.count() === before - 1, 'deleting one conversation changed the list otherwise');
    assert(await byId('conversation-title').getAttribute('data-id') === conversationId, 'deleting another conversation closed the open one');
    await bannerClear();
    log(`ok   delete conversation: ${doomedId} is gone, "${CONVERSATION_TITLE}" stays open`);

    // ----------------------------------------------------------------------------- feedback
    step = 'feedback';
    const good = answers.nth(0);
    const bad = answers.nth(1);
    await good.getByTestId('feedback-up').click();
    await good.getByTestId('feedback-thanks').waitFor({ state: 'visible' }).catch(() => { throw new Failure('👍 was not acknowledged'); });
    assert(await good.getByTestId('feedback-up').getAttribute('aria-pressed') === 'true', '👍 is not shown as given');
    await bad.getByTestId('feedback-down').click();
    const form = bad.getByTestId('feedback-form');
    await form.waitFor({ state: 'visible' }).catch(() => { throw new Failure('👎 did not open the feedback form'); });
    await form.getByTestId('feedback-skill').selectOption('tea-brewing');
    await form.getByTestId('feedback-comment').fill('A tea question: the router skill cannot answer it.');
    await page.screenshot({ path: path.join(shotDir, 'feedback.png'), fullPage: false });
    const [feedbackRequest] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/v1/feedback') && r.method() === 'POST'),
      form.getByTestId('feedback-send').click(),
    ]);
    await bad.getByTestId('feedback-thanks').waitFor({ state: 'visible' }).catch(() => { throw new Failure('👎 was not acknowledged'); });
    await bannerClear();
    const down = feedbackRequest.postDataJSON();
    assert(down.rating === 'down' && down.skill === 'tea-brewing' && down.query === MISROUTED_QUESTION && /^a-/.test(down.answer_id || ''),
      `the 👎 sent ${JSON.stringify(down)}`);
    log(`ok   feedback: 👍 on the PDF answer, 👎 with tea-brewing named on "${MISROUTED_QUESTION}"`);

    // --------------------------------------------------------------------------------- gaps
    step = 'gaps';
    await byId('tab-gaps').click();
    await byId('view-gaps').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="gap-group"]').length >= 3)
      .catch(() => { throw new Failure('the Gaps tab shows no groups'); });
    await bannerClear();
    const causes = await byId('gaps-groups').getByTestId('gap-group').evaluateAll((gs) => gs.map((g) => g.dataset.cause));
    for (const c of ['content', 'retrieval', 'routing']) assert(causes.includes(c), `the Gaps tab has no "${c}" group: ${causes.join(', ')}`);
    const gapRows = (cause) => page.locator(`[data-testid="gap-group"][data-cause="${cause}"] [data-testid="gap-row"]`);
    assert(await gapRows('content').count() > 0, 'the refused questions are not under "not in the knowledge"');
    const routing = await gapRows('routing').allInnerTexts();
    assert(routing.some((r) => r.includes(MISROUTED_QUESTION)), `the 👎 with another skill is not under "wrong skill": ${routing.join(' / ')}`);
    assert(await gapRows('liked').count() > 0, 'the answer rated 👍 is not under "answers users liked"');
    assert(await gapRows('liked').first().getByTestId('gap-draft').count() === 1, 'a liked answer cannot be drafted into an entry');
    log(`ok   gaps: ${causes.map((c) => c).join(', ')}; ${await gapRows('content').count()} not in the knowledge, ${routing.length} wrong skill, ${await gapRows('liked').count()} liked`);
    await page.screenshot({ path: path.join(shotDir, 'gaps.png'), fullPage: false });

    // ------------------------------------------------------------------------------- skills
    // A skill created from the page (a refused name shown by its field, then fixed), its
    // SKILL.md edited with lint's error shown by line and fixed, a document uploaded into it
    // and answered from, cited; then the skill deleted.
    step = 'skills';
    const skillRow = (name) => page.locator(`[data-testid="skill-list-row"][data-skill="${name}"]`);
    /** Waits for a re-index other than `previous` to end in the Skills tab; fails unless done. */
    const waitSkillsJob = async (previous, what) => {
      await page.waitForFunction((prev) => {
        const el = document.querySelector('[data-testid="skills-job"]');
        return el && el.dataset.job && el.dataset.job !== prev && (el.dataset.state === 'done' || el.dataset.state === 'failed');
      }, previous, { timeout: INDEX_TIMEOUT, polling: 250 }).catch(async () => {
        throw new Failure(`${what}: no finished re-index: ${(await byId('skills-job').innerText()).trim()}`);
      });
      assert(await byId('skills-job').getAttribute('data-state') === 'done', `${what}: the re-index failed`);
    };
    await byId('tab-skills').click();
    await byId('view-skills').waitFor({ state: 'visible' });
    for (const s of SKILLS) await skillRow(s).waitFor({ state: 'attached' }).catch(() => { throw new Failure(`the Skills tab does not list ${s}`); });
    assert(await byId('skills-readonly').isHidden(), 'the Skills tab says writes are off, but the server takes them');
    await byId('skill-new').click();
    await byId('skill-form').waitFor({ state: 'visible' });
    await byId('skill-form-name').fill('Coffee Brewing');
    await byId('skill-form-description').fill('Brewing coffee at home: grind size, water temperature and ratios for espresso and pour-over.');
    await byId('skill-form-triggers').fill('espresso, pour-over\ngrind size');
    await byId('skill-form-boundary').fill('Supports: brewing coffee at home.\nDoes not support: buying coffee machines.');
    await byId('skill-form-examples').fill('What grind size is right for espresso?\nHow hot should the water be for pour-over?');
    await byId('skill-form-instructions').fill('Answer from the brewing guide and cite it.');
    let previousSkillsJob = await byId('skills-job').getAttribute('data-job');
    await byId('skill-form-save').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="skill-form-error-name"]').textContent.trim().length > 0)
      .catch(() => { throw new Failure('the refused skill name is not shown beside its field'); });
    const nameError = await byId('skill-form-error-name').innerText();
    assert(/lowercase/.test(nameError), `the name error does not say what a name may hold: ${nameError}`);
    assert(await skillRow('coffee-brewing').count() === 0 && await byId('skill-form-description').inputValue() !== '', 'the refused form lost what was typed');
    await page.screenshot({ path: path.join(shotDir, 'skills-form-error.png'), fullPage: false });
    await byId('skill-form-name').fill('coffee-brewing');
    await byId('skill-form-save').click();
    await waitSkillsJob(previousSkillsJob, 'creating coffee-brewing');
    await skillRow('coffee-brewing').waitFor({ state: 'attached' }).catch(() => { throw new Failure('coffee-brewing is not listed after it was created'); });
    await byId('skill-editor').waitFor({ state: 'visible' }).catch(() => { throw new Failure('the new skill\'s SKILL.md did not open'); });
    const created = await byId('skill-editor-text').inputValue();
    assert(created.includes('name: coffee-brewing') && created.includes('- What grind size is right for espresso?'), `the new SKILL.md is not what the form said:\n${created}`);
    await bannerClear();
    log('ok   skills: a refused name is shown by its field; coffee-brewing created and indexed');
    await page.screenshot({ path: path.join(shotDir, 'skills.png'), fullPage: false });

    // Lint's error, by line, before anything is saved; then fixed.
    await byId('skill-editor-text').fill(created.replace('name: coffee-brewing', 'name: coffee'));
    await byId('skill-editor-save').click();
    const lintError = page.locator('[data-testid="skill-editor-diagnostics"] [data-testid="lint-message"].error');
    await lintError.first().waitFor({ state: 'visible' }).catch(() => { throw new Failure('saving a SKILL.md whose name is not its folder\'s showed no lint error'); });
    const lintText = await lintError.first().innerText();
    assert(/folder name/.test(lintText) && /line \d/.test(lintText), `the lint error does not say what and where: ${lintText}`);
    await page.screenshot({ path: path.join(shotDir, 'skills-lint.png'), fullPage: false });
    previousSkillsJob = await byId('skills-job').getAttribute('data-job');
    await byId('skill-editor-text').fill(created.replace('Brewing coffee at home', 'Brewing coffee and tea at home'));
    await byId('skill-editor-save').click();
    await waitSkillsJob(previousSkillsJob, 'saving the fixed SKILL.md');
    // The description cell's text (beside the open editor the column is hidden).
    await page.waitForFunction(() => /coffee and tea/.test(document.querySelector('[data-testid="skill-list-row"][data-skill="coffee-brewing"] td.desc').textContent))
      .catch(() => { throw new Failure('the saved description is not served'); });
    await bannerClear();
    log(`ok   skills: lint's error shown before saving (${lintText.replace(/\s+/g, ' ').slice(0, 100)}); the fix saved and served`);

    // Knowledge into the new skill, answered from it.
    await openDocuments('coffee-brewing');
    previousDocsJob = await byId('docs-job').getAttribute('data-job');
    await byId('docs-file').setInputFiles({
      name: 'espresso.md', mimeType: 'text/markdown',
      buffer: Buffer.from(ESPRESSO_GUIDE),
    });
    await waitDocsJob(previousDocsJob, 'uploading espresso.md into coffee-brewing');
    const espressoRow = await indexedRow('knowledge/espresso.md', 'after its upload into coffee-brewing');
    if (!token) {
      // A page imported by URL: the server fetches it (here a Markdown page it serves itself).
      previousDocsJob = await byId('docs-job').getAttribute('data-job');
      await byId('docs-import-url').fill(`${base}/v1/skills/tea-brewing/skill-md`);
      await byId('docs-import-go').click();
      await waitDocsJob(previousDocsJob, 'importing a page by URL');
      await indexedRow('knowledge/skill-md.md', 'after its import by URL');
      log('ok   import: a page fetched by URL is saved as knowledge/skill-md.md and indexed');
    }

    // Its chunks edited from the page: one rewritten, one disabled; both hold after a re-index.
    await espressoRow.getByTestId('doc-open').click();
    const chunkCard = (ordinal) => page.locator(`[data-testid="docs-chunk"][data-ordinal="${ordinal}"]`);
    await chunkCard(1).waitFor({ state: 'attached' }).catch(() => { throw new Failure('espresso.md is not listed as two chunks'); });
    // Another chunking preset previewed: its chunks shown in place, nothing changed.
    await byId('docs-preset-select').selectOption('technical');
    await byId('docs-preset-preview').click();
    await page.locator('[data-testid="docs-preview-chunk"]').first().waitFor({ state: 'attached' })
      .catch(() => { throw new Failure('the preset preview shows no chunks'); });
    const previewNote = await byId('docs-preset-note').innerText();
    assert(/Preview: \d+ chunks? as technical/.test(previewNote), `the preview does not say what it shows: ${previewNote}`);
    await page.screenshot({ path: path.join(shotDir, 'chunk-preset.png'), fullPage: false });
    await espressoRow.getByTestId('doc-open').click();
    await chunkCard(1).waitFor({ state: 'attached' }).catch(() => { throw new Failure('after the preview, espresso.md is not listed as its two chunks'); });
    log(`ok   chunking: ${previewNote}`);
    // Metadata of the document, saved from the panel: a filter in Retrieval testing (below).
    await byId('docs-metadata-text').fill('kind = guide');
    await byId('docs-metadata-save').click();
    await page.waitForFunction(() => /Saved: kind=guide/.test(document.querySelector('[data-testid="docs-metadata-note"]').textContent))
      .catch(() => { throw new Failure('the metadata was not saved'); });
    await chunkCard(1).waitFor({ state: 'attached' });
    await chunkCard(0).getByTestId('chunk-edit').click();
    await chunkCard(0).getByTestId('chunk-edit-text').fill(EDITED_CHUNK);
    await chunkCard(0).getByTestId('chunk-edit-keywords').fill('ristretto');
    previousDocsJob = await byId('docs-job').getAttribute('data-job');
    await chunkCard(0).getByTestId('chunk-edit-save').click();
    await waitDocsJob(previousDocsJob, 'editing chunk #0 of espresso.md');
    await page.waitForFunction((t) => {
      const card = document.querySelector('[data-testid="docs-chunk"][data-ordinal="0"]');
      return card && card.innerText.includes(t) && card.innerText.includes('edited');
    }, 'table salt').catch(() => { throw new Failure('the edited chunk does not show its new text, marked edited'); });
    previousDocsJob = await byId('docs-job').getAttribute('data-job');
    await chunkCard(1).getByTestId('chunk-toggle').click();
    await waitDocsJob(previousDocsJob, 'disabling chunk #1 of espresso.md');
    await page.locator('[data-testid="docs-chunk"][data-ordinal="1"][data-enabled="false"]').waitFor({ state: 'attached' })
      .catch(() => { throw new Failure('the disabled chunk is not listed as disabled'); });
    await page.screenshot({ path: path.join(shotDir, 'chunk-edits.png'), fullPage: false });
    await byId('tab-index').click();
    await byId('reindex-all').click();
    await page.waitForFunction(() => {
      const job = document.querySelector('[data-testid="index-job"]');
      return job && job.dataset.state === 'done';
    }, null, { timeout: INDEX_TIMEOUT }).catch(() => { throw new Failure('re-index all did not end done'); });
    const milkHits = await page.evaluate(async (token) => {
      const headers = { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
      const res = await fetch('/v1/search', { method: 'POST', headers, body: JSON.stringify({ query: 'steam the milk microfoam', skills: ['coffee-brewing'], k: 10 }) });
      return (await res.json()).hits.map((h) => `${h.ordinal}: ${h.text}`);
    }, token || '');
    assert(!milkHits.some((h) => h.includes("microfoam")), `the disabled chunk is still retrieved after the re-index: ${milkHits.join(' | ')}`);
    log('ok   chunk edits: chunk #0 rewritten (with a keyword), #1 disabled; both hold after re-index all');
    // The metadata filter of Retrieval testing: only the document tagged kind=guide answers.
    await byId('tab-retrieval').click();
    await byId('search-input').fill('brew water grind tea');
    await byId('search-skill').selectOption('coffee-brewing');
    await byId('search-metadata').fill('kind=guide');
    await byId('search-run').click();
    const tagged = byId('hits-table').getByTestId('hit-row');
    await tagged.first().waitFor({ state: 'visible', timeout: 30_000 }).catch(() => { throw new Failure('the metadata filter left no hits'); });
    const taggedSources = await tagged.evaluateAll((rows) => rows.map((r) => r.dataset.source));
    assert(taggedSources.every((s) => s === 'knowledge/espresso.md'), `the metadata filter let other documents through: ${taggedSources.join(', ')}`);
    await byId('search-metadata').fill('kind=poem');
    await byId('search-run').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="hits-table"] [data-testid="hit-row"]').length === 0)
      .catch(() => { throw new Failure('a metadata value no document has still finds hits'); });
    await byId('search-metadata').fill('');
    log(`ok   metadata: kind=guide keeps ${taggedSources.length} hit(s), all from espresso.md`);
    await byId('tab-chat').click();
    await byId('chat-clear').click();
    await page.locator('[data-testid="skill-picker"] option[value="coffee-brewing"]').waitFor({ state: 'attached' })
      .catch(() => { throw new Failure('the chat skill picker does not offer the new skill'); });
    await byId('skill-picker').selectOption('coffee-brewing');
    const coffee = await ask('What grind size is right for espresso?');
    const coffeeText = (await coffee.innerText()).trim();
    assert(await coffee.getByTestId('refusal').count() === 0, `the new skill refused: ${coffeeText.slice(0, 200)}`);
    assert(coffeeText.includes('table salt'), `the answer is not from the edited chunk: ${coffeeText.slice(0, 200)}`);
    assert(await coffee.locator('[data-testid="citation-link"][title*="espresso.md"]').count() > 0, `the answer does not cite espresso.md: ${coffeeText.slice(0, 200)}`);
    log('ok   skills: a document uploaded into the new skill answers, cited');

    // A question the new skill cannot answer: a gap, drafted and approved from the Gaps tab
    // into a new entry; asked again, it is answered from the entry, cited.
    step = 'gap-draft';
    const coldBrew = await ask(COLD_BREW_QUESTION);
    assert(await coldBrew.getByTestId('refusal').count() === 1, `"${COLD_BREW_QUESTION}" was answered: ${(await coldBrew.innerText()).slice(0, 200)}`);
    await byId('tab-gaps').click();
    const gapRow = page.locator('[data-testid="gap-group"][data-cause="content"] [data-testid="gap-row"]', { hasText: COLD_BREW_QUESTION });
    await gapRow.waitFor({ state: 'attached' }).catch(() => { throw new Failure('the refused question is not listed in Gaps'); });
    await gapRow.getByTestId('gap-draft').click();
    await byId('draft-answer').waitFor({ state: 'visible' }).catch(() => { throw new Failure('Draft opened no draft'); });
    assert(await byId('draft-skill').inputValue() === 'coffee-brewing', 'the draft is not for the skill the question went to');
    assert(await byId('draft-question').inputValue() === COLD_BREW_QUESTION, 'the draft does not hold the question as asked');
    await byId('draft-answer').fill(COLD_BREW_ANSWER);
    await page.screenshot({ path: path.join(shotDir, 'gaps-draft.png'), fullPage: false });
    await byId('draft-approve').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="gaps-status"]').dataset.state === 'done', null, { timeout: INDEX_TIMEOUT })
      .catch(() => { throw new Failure('approving the draft did not end indexed'); });
    await gapRow.waitFor({ state: 'detached' }).catch(() => { throw new Failure('the approved gap is still listed'); });
    await bannerClear();
    await byId('tab-chat').click();
    const closed = await ask(COLD_BREW_QUESTION);
    const closedText = (await closed.innerText()).trim();
    assert(await closed.getByTestId('refusal').count() === 0 && closedText.includes('12 to 18 hours'), `asked again, the question is not answered from the entry: ${closedText.slice(0, 200)}`);
    assert(await closed.locator('[data-testid="citation-link"][title*="answers-from-gaps.md"]').count() > 0, `the answer does not cite the new entry: ${closedText.slice(0, 200)}`);
    log('ok   gaps closed: a refused question drafted, approved and indexed; asked again, answered from the new entry, cited');

    // Disabled from the page: still listed, offered by no picker, not answered from; enabled
    // again, it is re-indexed and answers.
    step = 'skill-disable';
    await byId('tab-skills').click();
    await skillRow('coffee-brewing').getByTestId('skill-toggle').click();
    await page.locator('[data-testid="skill-list-row"][data-skill="coffee-brewing"][data-enabled="false"]').waitFor({ state: 'attached' })
      .catch(() => { throw new Failure('the disabled skill is not listed as disabled'); });
    assert((await skillRow('coffee-brewing').innerText()).includes('disabled'), 'the row does not say disabled');
    await page.screenshot({ path: path.join(shotDir, 'skills-disabled.png'), fullPage: false });
    assert(await page.locator('#skill-picker option[value="coffee-brewing"]').count() === 0, 'the chat still offers the disabled skill');
    await byId('tab-chat').click();
    const off = await ask('What grind size is right for espresso?');
    assert(await off.locator('[data-testid="citation-link"][title*="espresso.md"]').count() === 0, 'a disabled skill answered');
    await byId('tab-skills').click();
    previousSkillsJob = await byId('skills-job').getAttribute('data-job');
    await skillRow('coffee-brewing').getByTestId('skill-toggle').click();
    await waitSkillsJob(previousSkillsJob, 'enabling coffee-brewing');
    await page.locator('[data-testid="skill-list-row"][data-skill="coffee-brewing"][data-enabled="true"]').waitFor({ state: 'attached' })
      .catch(() => { throw new Failure('the enabled skill is still listed as disabled'); });
    await byId('tab-chat').click();
    await byId('skill-picker').selectOption('coffee-brewing');
    const on = await ask('What grind size is right for espresso?');
    assert(await on.locator('[data-testid="citation-link"][title*="espresso.md"]').count() > 0, 'the enabled skill does not answer');
    await byId('skill-picker').selectOption('auto');
    log('ok   skills: coffee-brewing disabled (listed, not answered from) and enabled again');

    // Renamed from the page, then deleted: asked to confirm, gone from the list, its folder in the trash.
    await byId('tab-skills').click();
    await skillRow('coffee-brewing').getByTestId('skill-rename').click();
    await byId('skill-rename-name').fill('home-coffee');
    previousSkillsJob = await byId('skills-job').getAttribute('data-job');
    await byId('skill-rename-save').click();
    await waitSkillsJob(previousSkillsJob, 'renaming coffee-brewing');
    await skillRow('home-coffee').waitFor({ state: 'attached' }).catch(() => { throw new Failure('the renamed skill is not listed'); });
    assert(await skillRow('coffee-brewing').count() === 0, 'the old name is still listed');
    log('ok   skills: coffee-brewing renamed to home-coffee');
    await skillRow('home-coffee').getByTestId('skill-delete').click();
    await byId('confirm-dialog').waitFor({ state: 'visible' });
    assert((await byId('confirm-text').innerText()).includes('home-coffee'), 'the confirmation does not name the skill');
    await byId('confirm-ok').click();
    await skillRow('home-coffee').waitFor({ state: 'detached' }).catch(() => { throw new Failure('home-coffee is still listed after its deletion'); });
    const deletedNote = await byId('skill-deleted').innerText();
    assert(/trash/.test(deletedNote), `the deletion does not say where the folder went: ${deletedNote}`);
    for (const s of SKILLS) assert(await skillRow(s).count() === 1, `deleting home-coffee took ${s} with it`);
    await bannerClear();
    log(`ok   skills: deleted: ${deletedNote}`);
    // Every view on a phone: the tab bar scrolls, no table pushes the page sideways.
    await page.setViewportSize({ width: 420, height: 900 });
    for (const view of ['chat', 'skills', 'documents', 'retrieval', 'gaps', 'index']) {
      await byId(`tab-${view}`).scrollIntoViewIfNeeded();
      await byId(`tab-${view}`).click();
      await byId(`view-${view}`).waitFor({ state: 'visible' });
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(shotDir, `${view}-420.png`), fullPage: false });
      const wide = await page.evaluate(() => {
        const over = [...document.querySelectorAll(`#view-${location.hash.slice(1) || 'chat'} *`)]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap'))
          .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${e.className}`);
        return { width: document.documentElement.scrollWidth, over: over.slice(0, 5) };
      });
      assert(wide.width <= 430, `the ${view} view is ${wide.width} px wide at 420 px: it scrolls sideways (${wide.over.join(', ')})`);
    }
    await page.setViewportSize({ width: 1280, height: 860 });

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
