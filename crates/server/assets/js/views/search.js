// The Retrieval testing view: a query's route and its hits, with their scores and ranks.
import { $, dash, el } from '../dom.js';
import { formatPages, normalize, num, plural } from '../format.js';
import { renderMarkdown } from '../markdown.js';
import { api } from '../api.js';
import { clearError, guard } from '../ui.js';

function scoreCell(score, rank, digits) {
  const td = el('td', { class: 'num' });
  if (score === null || score === undefined) {
    td.append(dash());
  } else {
    td.append(num(score, digits));
  }
  if (rank !== null && rank !== undefined) td.append(' ', el('span', { class: 'rank', text: `#${rank}` }));
  else if (score !== null && score !== undefined) td.append(' ', el('span', { class: 'rank none', text: '#–' }));
  return td;
}

function renderRouteTable(route) {
  const summary = $('#route-summary');
  summary.textContent = '';
  const skills = Array.isArray(route.skills) ? route.skills : [];
  summary.append('decision ', el('b', { text: route.decision || '–' }), ' · skills ',
    el('b', { text: skills.length ? skills.join(', ') : 'none' }),
    ' · confidence ', el('b', { text: typeof route.confidence === 'number' ? route.confidence.toFixed(3) : '–' }));
  if (route.gate) summary.append(' · gate ', el('b', { text: route.gate }));

  const tbody = $('#route-table tbody');
  tbody.textContent = '';
  for (const c of route.candidates || []) {
    const hits = (c.keyword_hits || []).map((k) => el('span', { class: 'chip', text: k }));
    tbody.append(el('tr', { class: skills.includes(c.skill) ? 'chosen' : '', dataset: { testid: 'route-row', skill: c.skill } },
      el('td', { class: 'skill', text: c.skill }),
      el('td', { class: 'num' }, num(c.score, 3)),
      el('td', {}, hits.length ? hits : dash()),
      el('td', { class: 'num' }, num(c.dense, 3)),
      el('td', { class: 'num' }, num(c.profile, 3)),
      el('td', { class: 'num' }, num(c.specificity, 3)),
      el('td', { class: 'num' }, num(c.knowledge, 3)),
      el('td', { class: 'num' }, num(c.knowledge_dense, 3)),
      el('td', {}, c.language_match === undefined || c.language_match === null ? dash() : (c.language_match ? 'match' : 'other'))));
  }
}

function renderSearchMeta(result) {
  const meta = $('#search-meta');
  meta.textContent = '';
  const line = el('div');
  const terms = (result.terms || []).map((t) => el('span', { class: 'chip', text: t }));
  line.append('terms ', ...(terms.length ? terms : [dash()]));
  if (typeof result.query_visibility === 'number') {
    line.append(` · the embedding model sees ${Math.round(result.query_visibility * 100)}% of the query`);
  }
  const t = result.timings_ms || {};
  if (typeof t.total === 'number') line.append(` · ${t.total.toFixed(1)} ms`);
  meta.append(line);
  const items = [];
  for (const s of result.skills || []) {
    const bits = [`${s.skill}: bm25 ${s.bm25_used ? '✓' : '✗'}, dense ${s.dense_used ? '✓' : '✗'}`];
    if (s.dense_skipped) bits.push(`dense skipped: ${s.dense_skipped}`);
    if (s.notice) bits.push(s.notice);
    items.push(el('li', { text: bits.join(' — ') }));
  }
  if (items.length) meta.append(el('ul', {}, items));
  if (typeof result.filtered === 'number') {
    const min = result.min_score ?? $('#search-min-score').value;
    meta.append(el('div', {
      class: 'filtered', dataset: { testid: 'search-filtered', n: result.filtered },
      text: `${plural(result.filtered, 'hit')} below the min score${min !== '' && min !== undefined ? ` of ${min}` : ''} left out`,
    }));
  }
}

function renderHits(hits) {
  const tbody = $('#hits-table tbody');
  tbody.textContent = '';
  if (!hits.length) {
    tbody.append(el('tr', { class: 'no-hits' }, el('td', { colspan: 9, class: 'none', text: 'no hits' })));
    return;
  }
  hits.forEach((h, i) => {
    const scores = h.scores || {};
    const ranks = h.ranks || {};
    const pages = formatPages(h.pages);
    const text = String(h.text || '');
    const full = el('div', { class: 'full', dataset: { testid: 'hit-text' } });
    renderMarkdown(full, text);
    // The one-line preview is the rendered text, without Markdown's `**` and `|`.
    const plain = normalize(full.textContent);
    const snippet = plain.slice(0, 160) + (plain.length > 160 ? '…' : '');
    const heading = el('td', {}, h.heading || dash());
    if (h.title && h.title !== h.heading) heading.append(el('div', { class: 'rank', text: h.title }));
    tbody.append(el('tr', { dataset: { testid: 'hit-row', skill: h.skill, source: h.source } },
      el('td', { class: 'num', text: String(i + 1) }),
      el('td', { class: 'skill', text: h.skill }),
      el('td', { class: 'src' }, h.source, pages ? el('div', { class: 'rank', text: pages }) : null,
        h.ordinal !== undefined ? el('div', { class: 'rank', text: `chunk #${h.ordinal}` }) : null),
      heading,
      scoreCell(scores.bm25, ranks.bm25, 3),
      scoreCell(scores.dense, ranks.dense, 3),
      scoreCell(scores.fused, ranks.fused, 4),
      scoreCell(scores.rerank, ranks.rerank, 3),
      el('td', { class: 'text' }, el('details', {},
        el('summary', {}, el('span', { class: 'snip', text: snippet }), el('span', { class: 'hide', text: 'hide text' })),
        full)),
    ));
  });
}

/** The threshold, weights and filters of a search: only those that are set. */
function searchControls() {
  const out = {};
  for (const [id, key] of [['#search-min-score', 'min_score'], ['#search-bm25-weight', 'bm25_weight'], ['#search-dense-weight', 'dense_weight']]) {
    const input = $(id);
    const raw = input.value.trim();
    if (raw === '') continue;
    const x = Number(raw);
    if (!Number.isFinite(x) || (key !== 'min_score' && x < 0)) {
      input.focus();
      throw new Error(`${key} must be a number${key !== 'min_score' ? ' of 0 or more' : ''}, not "${raw}"`);
    }
    out[key] = x;
  }
  const source = $('#search-source').value.trim();
  if (source) out.source = source;
  const dir = $('#search-dir').value.trim();
  if (dir) out.dir = dir;
  const types = Array.from(document.querySelectorAll('#search-form input[name="doc-type"]:checked')).map((c) => c.value);
  if (types.length) out.doc_types = types;
  const metadata = parseMetadata($('#search-metadata').value);
  if (Object.keys(metadata).length) out.metadata = metadata;
  return out;
}

/** `key=value, key=value` as an object (the server checks keys and values). */
export function parseMetadata(text) {
  const out = {};
  for (const part of String(text || '').split(/[,，\n]/).map((p) => p.trim()).filter(Boolean)) {
    const at = part.indexOf('=');
    if (at <= 0) throw new Error(`metadata: "${part}" is not key=value`);
    out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

function resetSearchControls() {
  for (const id of ['#search-min-score', '#search-bm25-weight', '#search-dense-weight', '#search-source', '#search-dir', '#search-metadata']) $(id).value = '';
  for (const c of document.querySelectorAll('#search-form input[name="doc-type"]')) c.checked = false;
}

export async function runSearch() {
  const query = $('#search-input').value.trim();
  if (!query) return;
  clearError();
  const skill = $('#search-skill').value;
  const mode = $('#search-mode').value;
  const k = parseInt($('#search-k').value, 10);
  const req = { query, mode };
  if (skill) req.skills = [skill];
  if (Number.isFinite(k) && k > 0) req.k = k;
  Object.assign(req, searchControls());
  const button = $('#search-run');
  button.disabled = true;
  try {
    const [route, result] = await Promise.all([
      api('POST', '/v1/route', { query }),
      api('POST', '/v1/search', req),
    ]);
    renderRouteTable(route);
    renderSearchMeta(result);
    renderHits(result.hits || []);
    $('#search-results').hidden = false;
  } finally {
    button.disabled = false;
  }
}

/** Wires the view's controls (once, at start). */
export function init() {
  $('#search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(runSearch)();
  });
  $('#search-reset').addEventListener('click', resetSearchControls);
}

/** The tab was opened. */
export function show() {
  $('#search-input').focus();
}
