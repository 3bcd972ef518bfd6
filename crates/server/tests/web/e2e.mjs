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

class Failure extends Error {}
function assert(cond, message) {
  if (!cond) throw new Failure(message);
}
const log = (...args) => console.log(...args);

const jsErrors = [];
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
