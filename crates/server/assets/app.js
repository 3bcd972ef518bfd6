// skillrag web page, a knowledge-base workbench: chat with citations in stored conversations
// (with feedback on answers), a skill's documents (upload, delete, chunks), retrieval testing,
// knowledge gaps and index status.
// Plain ES2020; talks to the HTTP API of `skillrag serve` (docs/http-api.md). Its one
// dependency is markdown-it (assets/markdown-it.min.js, vendored and embedded, loaded before
// this file) to render answers and passages as Markdown: a CommonMark-tested parser whose
// documented safe mode (`html: false`) escapes raw HTML, which is simpler to trust than a
// renderer of our own. Knowledge files are untrusted for the browser; see "Markdown" below.
'use strict';

(() => {
  const TOKEN_KEY = 'skillrag.token';
  const CONVERSATION_KEY = 'skillrag.conversation';
  const DOCS_SKILL_KEY = 'skillrag.docs-skill';
  const POLL_MS = 500;
  const DOCS_POLL_MS = 1000;

  // ---------------------------------------------------------------------------------------
  // Small helpers

  const $ = (sel, root = document) => root.querySelector(sel);

  /** Creates an element: el('td', {class: 'num', dataset: {n: 1}}, 'text', child…). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key === 'text') node.textContent = value;
      else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }

  const dash = () => el('span', { class: 'none', text: '–' });

  /** A number with `digits` decimals, or a dash for null/undefined. */
  function num(x, digits) {
    if (x === null || x === undefined || Number.isNaN(x)) return dash();
    if (typeof x !== 'number') return String(x);
    return x.toFixed(digits);
  }

  function formatPages(pages) {
    if (pages === null || pages === undefined || pages === '') return '';
    if (Array.isArray(pages)) {
      const [a, b] = pages;
      if (pages.length === 0) return '';
      if (b === undefined || b === null || a === b) return `p. ${a}`;
      return `pp. ${a}–${b}`;
    }
    if (typeof pages === 'object') {
      const a = pages.start ?? pages.first ?? pages.from;
      const b = pages.end ?? pages.last ?? pages.to;
      if (a !== undefined) return a === b || b === undefined ? `p. ${a}` : `pp. ${a}–${b}`;
      return JSON.stringify(pages);
    }
    return `p. ${pages}`;
  }

  function formatBytes(n) {
    if (typeof n !== 'number') return '';
    if (n < 1024) return `${n} B`;
    const units = ['KiB', 'MiB', 'GiB', 'TiB'];
    let v = n / 1024;
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
  }

  function toDate(t) {
    if (t === null || t === undefined || t === '') return null;
    // Unix seconds (the API's timestamps), milliseconds, or an ISO string.
    const d = typeof t === 'number' ? new Date(t > 1e12 ? t : t * 1000) : new Date(t);
    return Number.isNaN(d.getTime()) ? null : d;
  }

  /** `2026-12-03 18:02` in local time, or '' for no time. */
  function formatTime(t) {
    const d = toDate(t);
    if (!d) return '';
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
  }

  /** `just now`, `5 min ago`, `3 h ago`, else the date. */
  function ago(t) {
    const d = toDate(t);
    if (!d) return '';
    const s = (Date.now() - d.getTime()) / 1000;
    if (s < 60) return 'just now';
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
    return formatTime(t).slice(0, 10);
  }

  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const enc = encodeURIComponent;

  // `skill/source`, or the project path alone for a shared folder's document (`/shared/…`).
  function citedPath(cit) {
    return String(cit.source).startsWith('/') ? cit.source : `${cit.skill}/${cit.source}`;
  }

  function sourceUrl(skill, source) {
    const path = String(source).split('/').map(encodeURIComponent).join('/');
    return `/v1/skills/${encodeURIComponent(skill)}/sources/${path}`;
  }

  // A cited picture's bytes (`citations[].image.path`).
  function pictureUrl(skill, path) {
    const p = String(path).split('/').map(encodeURIComponent).join('/');
    return `/v1/skills/${encodeURIComponent(skill)}/pictures/${p}`;
  }

  const normalize = (s) => String(s || '').replace(/\s+/g, ' ').trim();

  // ---------------------------------------------------------------------------------------
  // Markdown
  //
  // Answers and passages quote knowledge files, which nobody vetted for a browser, so a file
  // must not be able to inject markup: `html: false` makes `<script>`, `<img onerror=…>` and
  // every other tag literal text. On top of markdown-it's own checks: only http(s) links are
  // links (a relative one would resolve against this page, not the file, so it shows as its
  // label with the target as a tooltip; any other scheme stays literal text), images show as
  // their alt text (the page loads nothing a file names), and no reference definitions, so a
  // `[1]: url` line cannot turn a citation marker into its link.

  // http(s), or relative: no scheme, i.e. no ':' before the first '/', '?' or '#'.
  const SAFE_URL = /^(?:https?:\/\/|[^:/?#]*(?:[/?#]|$))/i;
  const ABSOLUTE_URL = /^https?:\/\//i;

  function markdown(breaks) {
    if (typeof window.markdownit !== 'function') return null;
    const m = window.markdownit({ html: false, linkify: true, breaks, typographer: false });
    m.disable('reference');
    // Only URLs written with their scheme: file names such as `setup.md` are not domains.
    m.linkify.set({ fuzzyLink: false, fuzzyEmail: false });
    m.validateLink = (url) => SAFE_URL.test(url.trim());
    m.renderer.rules.image = (tokens, idx, options, env, self) => {
      const alt = self.renderInlineAsText(tokens[idx].children || [], options, env);
      return `<span class="md-image">${escapeHtml(alt ? `[image: ${alt}]` : '[image]')}</span>`;
    };
    m.renderer.rules.link_open = (tokens, idx, options, env, self) => {
      const open = tokens[idx];
      const href = open.attrGet('href') || '';
      if (ABSOLUTE_URL.test(href)) {
        open.attrSet('target', '_blank');
        open.attrSet('rel', 'noopener noreferrer');
      } else {
        open.tag = 'span';
        open.attrs = [['class', 'md-link'], ['title', href]];
        const close = tokens.slice(idx + 1).find((t) => t.type === 'link_close' && t.level === open.level);
        if (close) close.tag = 'span';
      }
      return self.renderToken(tokens, idx, options);
    };
    return m;
  }
  // Answers keep their line breaks (the footnotes under an answer are one per line); knowledge
  // files are hard-wrapped Markdown, so a single newline in a passage is a space.
  const mdAnswer = markdown(true);
  const mdPassage = markdown(false);

  /** Renders `text` as Markdown into `target` (replacing its content); plain text without md. */
  function renderMarkdown(target, text, md = mdPassage) {
    target.textContent = '';
    const source = String(text ?? '');
    if (!source) return;
    const body = el('div', { class: md ? 'md' : 'md plain' });
    if (md) body.innerHTML = md.render(source);
    else body.textContent = source;
    target.append(body);
  }

  /** The text nodes under `root` that are prose: not in code, a code block or a link. */
  function proseTextNodes(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n.parentElement.closest('code, pre, a') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    return nodes;
  }

  // ---------------------------------------------------------------------------------------
  // Errors, auth and the API client

  class ApiError extends Error {
    constructor(status, body, fallback) {
      const e = body && body.error ? body.error : null;
      super(e && e.message ? e.message : fallback || `HTTP ${status}`);
      this.status = status;
      this.code = e && e.code !== undefined ? e.code : status;
      this.type = e && e.type ? e.type : 'http_error';
    }
  }
  class AuthError extends Error {}

  function showError(message) {
    $('#error-text').textContent = message;
    $('#error-banner').classList.remove('hidden');
  }
  function clearError() {
    $('#error-banner').classList.add('hidden');
    $('#error-text').textContent = '';
  }
  function describe(err) {
    if (err instanceof ApiError) {
      const retry = err.retryAfter ? ` (retry after ${err.retryAfter} s)` : '';
      return `${err.type} (${err.code}): ${err.message}${retry}`;
    }
    if (err && err.name === 'TypeError' && /fetch|network/i.test(err.message)) {
      return `network error: cannot reach the server (${err.message})`;
    }
    return `error: ${err && err.message ? err.message : err}`;
  }
  /** Reports a failed action: API errors in the banner, a 401 through the token form. */
  function report(err) {
    if (err instanceof AuthError) return;
    if (err && err.name === 'AbortError') return;
    showError(describe(err));
    if (!(err instanceof ApiError)) console.error(err);
  }
  /** Wraps an async event handler so that a failure always ends in the banner. */
  const guard = (fn) => (...args) => Promise.resolve().then(() => fn(...args)).catch(report);

  /** Asks in the page's own dialog (not window.confirm); resolves true for OK. */
  function confirmDialog(message, okLabel = 'OK') {
    const dialog = $('#confirm-view');
    $('#confirm-text').textContent = message;
    $('#confirm-ok').textContent = okLabel;
    dialog.returnValue = '';
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
      dialog.showModal();
      $('#confirm-cancel').focus();
    });
  }

  const token = () => localStorage.getItem(TOKEN_KEY) || '';

  function headers(json) {
    const h = { Accept: 'application/json' };
    if (json) h['Content-Type'] = 'application/json';
    const t = token();
    if (t) h.Authorization = `Bearer ${t}`;
    return h;
  }

  function needToken() {
    const bar = $('#auth-bar');
    bar.classList.remove('hidden');
    $('#auth-token').value = token();
    $('#auth-token').focus();
  }

  /** Throws ApiError/AuthError for a failed response (reading its error JSON). */
  async function check(res) {
    if (res.ok) return res;
    if (res.status === 401) {
      needToken();
      throw new AuthError('unauthorized');
    }
    let body = null;
    let text = '';
    try {
      text = await res.text();
      body = JSON.parse(text);
    } catch (_) { /* not JSON */ }
    const err = new ApiError(res.status, body, text ? `HTTP ${res.status}: ${text.slice(0, 200)}` : `HTTP ${res.status}`);
    err.retryAfter = res.headers.get('Retry-After');
    throw err;
  }

  async function api(method, path, body, opts = {}) {
    const res = await fetch(path, {
      method,
      headers: headers(body !== undefined),
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: opts.signal,
    });
    await check(res);
    if (res.status === 204) return null;
    return res.json();
  }

  // ---------------------------------------------------------------------------------------
  // Shared state

  const state = {
    skills: [],           // SkillStatus objects from GET /v1/skills
    models: [],           // model ids from GET /v1/models
    conversation: null,   // {id, title} of the conversation shown, null before its first question
    conversations: [],    // summaries from GET /v1/conversations, newest first
    streaming: null,      // AbortController of the answer being streamed
    polling: null,        // timer of the index-job poll (Index tab)
    docs: null,           // GET /v1/skills/{skill}/documents of the skill shown
    docsPolling: null,    // timer of the re-index poll after an upload or delete
    pendingUpload: null,  // files waiting for "Replace" after a name conflict
    loaded: false,
  };

  // ---------------------------------------------------------------------------------------
  // Tabs

  const VIEWS = ['chat', 'documents', 'retrieval', 'gaps', 'index'];

  function currentView() {
    const v = location.hash.replace(/^#/, '');
    return VIEWS.includes(v) ? v : 'chat';
  }

  function showView() {
    const view = currentView();
    for (const v of VIEWS) {
      $(`#view-${v}`).hidden = v !== view;
      const tab = $(`#tab-${v}`);
      tab.classList.toggle('active', v === view);
      tab.setAttribute('aria-selected', String(v === view));
    }
    if (view === 'index') guard(refreshIndexView)();
    if (view === 'documents') guard(showDocuments)();
    if (view === 'gaps') guard(loadGaps)();
    if (view === 'chat') $('#chat-input').focus();
    if (view === 'retrieval') $('#search-input').focus();
  }

  // ---------------------------------------------------------------------------------------
  // Skills, models, health

  async function loadHealth() {
    const h = $('#health');
    try {
      const res = await fetch('/healthz', { headers: headers(false) });
      const body = await res.json();
      h.textContent = `${body.indexed ?? '?'} / ${body.skills ?? '?'} skills indexed`;
      h.className = `health ${body.status === 'ok' ? 'ok' : 'down'}`;
    } catch (_) {
      h.textContent = 'server unreachable';
      h.className = 'health down';
    }
  }

  async function loadSkills() {
    const body = await api('GET', '/v1/skills');
    state.skills = Array.isArray(body) ? body : body.skills || [];
    fillSkillSelect($('#search-skill'), 'all skills');
    const docs = $('#docs-skill');
    fillSkillSelect(docs, null, docs.value || localStorage.getItem(DOCS_SKILL_KEY) || '');
    fillSkillSelect($('#gaps-skill'), 'all skills');
    return state.skills;
  }

  async function loadModels() {
    let ids = [];
    try {
      const body = await api('GET', '/v1/models');
      ids = (body.data || []).map((m) => m.id);
    } catch (err) {
      if (err instanceof AuthError) throw err;
      // Fall back to the skill list.
      ids = ['skillrag/auto', ...state.skills.map((s) => `skillrag/${s.skill}`)];
    }
    state.models = ids;
    fillSkillPicker();
  }

  function fillSkillPicker() {
    const picker = $('#skill-picker');
    const previous = picker.value || 'auto';
    picker.textContent = '';
    const names = state.models.map((id) => id.replace(/^skillrag\//, ''));
    if (!names.includes('auto')) names.unshift('auto');
    for (const name of names) picker.append(el('option', { value: name, text: name }));
    picker.value = names.includes(previous) ? previous : 'auto';
    updateSkillHint();
  }

  function updateSkillHint() {
    const name = $('#skill-picker').value;
    const skill = state.skills.find((s) => s.skill === name);
    $('#skill-hint').textContent = name === 'auto'
      ? 'auto routes each question to the right skill'
      : (skill && skill.description ? skill.description : `answers only from ${name}`);
    $('#skill-hint').title = $('#skill-hint').textContent;
  }

  /**
   * Fills a skill <select> with every skill, after an "all skills" choice (value '') when
   * `allLabel` is given, keeping `previous` selected when it still exists.
   */
  function fillSkillSelect(select, allLabel, previous = select.value) {
    select.textContent = '';
    if (allLabel) select.append(el('option', { value: '', text: allLabel }));
    for (const s of state.skills) select.append(el('option', { value: s.skill, text: s.skill }));
    if (state.skills.some((s) => s.skill === previous)) select.value = previous;
    else if (allLabel) select.value = '';
  }

  async function loadAll() {
    await loadHealth();
    await loadSkills();
    await loadModels();
    state.loaded = true;
    if (currentView() === 'documents') await loadDocuments();
    await loadConversations();
    await resumeConversation();
  }

  // ---------------------------------------------------------------------------------------
  // Chat

  function appendMessage(role) {
    const empty = $('#chat-empty');
    if (empty) empty.remove();
    const bubble = el('div', { class: 'bubble' });
    const meta = el('div', { class: 'meta' });
    const node = el('div', {
      class: `msg ${role}`,
      dataset: role === 'assistant' ? { testid: 'answer', state: 'streaming' } : { testid: 'question' },
    }, bubble, meta);
    $('#chat-log').append(node);
    scrollChat();
    return { node, bubble, meta };
  }

  function scrollChat() {
    const log = $('#chat-log');
    log.scrollTop = log.scrollHeight;
  }

  function citationLink(cit) {
    const link = el('a', {
      href: '#', class: 'cite', dataset: { testid: 'citation-link', n: cit.n },
      title: `${citedPath(cit)}${cit.heading ? ` › ${cit.heading}` : ''}`,
    }, `[${cit.n}]`);
    link.addEventListener('click', (ev) => {
      ev.preventDefault();
      for (const a of document.querySelectorAll('a.cite.active')) a.classList.remove('active');
      link.classList.add('active');
      guard(openCitation)(cit);
    });
    return link;
  }

  /**
   * The answer rendered as Markdown, with every `[n]` that has a citation turned into a link.
   * Markers are linked in the rendered text nodes (never in HTML strings), outside code.
   */
  function renderAnswer(target, text, citations) {
    const byN = new Map((citations || []).map((c) => [Number(c.n), c]));
    renderMarkdown(target, text, mdAnswer);
    if (!byN.size) return;
    const marker = /\[(\d+)\]/g;
    for (const node of proseTextNodes(target)) {
      const s = node.nodeValue;
      const parts = [];
      let last = 0;
      for (const m of s.matchAll(marker)) {
        const cit = byN.get(Number(m[1]));
        if (!cit) continue;
        if (m.index > last) parts.push(s.slice(last, m.index));
        parts.push(citationLink(cit));
        last = m.index + m[0].length;
      }
      if (!parts.length) continue;
      if (last < s.length) parts.push(s.slice(last));
      node.replaceWith(...parts);
    }
  }

  /** The route under an answer, from the Answer JSON (`route`, `timings_ms`). */
  function renderRoute(meta, extras) {
    meta.textContent = '';
    const route = extras && extras.route;
    if (!route) return;
    const parts = [];
    const tag = (text, testid) => parts.push(el('span', { class: 'tag', dataset: testid ? { testid } : null, text }), ' ');
    if (route.gate) tag(`gate: ${route.gate}`);
    const skills = Array.isArray(route.skills) ? route.skills : [];
    tag(skills.length ? skills.join(' + ') : 'no skill', 'route-skills');
    if (route.decision) tag(route.decision);
    if (route.forced) tag('forced');
    if (typeof route.confidence === 'number') parts.push(`confidence ${route.confidence.toFixed(2)}`);
    const total = extras.timings_ms && extras.timings_ms.total;
    if (typeof total === 'number') parts.push(` · ${Math.round(total)} ms`);
    meta.append('route: ', ...parts);
    meta.dataset.testid = 'route';
  }

  function renderRefusal(msg, refusal, text) {
    msg.bubble.replaceWith(el('div', { class: 'refusal', dataset: { testid: 'refusal', kind: refusal.kind || '' } },
      el('div', { class: 'kind', text: `refused · ${refusal.kind || 'unknown'}` }),
      el('div', { class: 'refusal-text', text: text || refusal.message || '' })));
  }

  /**
   * POSTs a question to /v1/ask with `stream: true` and calls onText for every `text` event
   * (a checked sentence of an LLM answer); resolves with the Answer JSON of the `answer` event.
   * An `error` event rejects with its ApiError. A server that answers without SSE gives the
   * Answer JSON directly.
   */
  async function streamAsk(body, signal, onText) {
    const res = await fetch('/v1/ask', {
      method: 'POST',
      headers: { ...headers(true), Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
    await check(res);
    const type = res.headers.get('Content-Type') || '';
    if (!type.includes('text/event-stream')) return res.json();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let event = '';
    let data = [];
    let answer = null;
    const dispatch = () => {
      const name = event || 'message';
      const payload = data.join('\n');
      event = '';
      data = [];
      if (!payload) return;
      let parsed;
      try {
        parsed = JSON.parse(payload);
      } catch (_) {
        throw new Error(`unreadable stream event: ${payload.slice(0, 120)}`);
      }
      if (name === 'error' || (parsed && parsed.error)) {
        throw new ApiError((parsed && parsed.error && parsed.error.code) || 500, parsed, 'stream error');
      }
      if (name === 'text') {
        if (parsed && typeof parsed.text === 'string') onText(parsed.text);
      } else if (name === 'answer') {
        answer = parsed;
      }
    };
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') dispatch();
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        // `id:`, `retry:` and `:` comments are ignored
      }
      if (done) {
        if (buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''));
        dispatch();
        break;
      }
    }
    if (!answer) throw new Error('the answer stream ended without an answer');
    return answer;
  }

  /** An Answer's citation with the passage it cites (its context piece's text). */
  function withText(answer, cit) {
    if (typeof cit.text === 'string' && cit.text) return cit;
    const pieces = (answer.context && answer.context.pieces) || [];
    const piece = pieces.find((p) => Number(p.n) === Number(cit.context_n));
    return { ...cit, text: piece ? piece.text : '' };
  }

  /** The answer as plain text with its sources under it, as the CLI prints it. */
  function plainAnswer(text, citations) {
    const notes = citations.map((c) => {
      const pages = formatPages(c.pages);
      return `[${c.n}] ${citedPath(c)}${pages ? ` ${pages}` : ''}${c.heading ? ` › ${c.heading}` : ''}`;
    });
    return notes.length ? `${text}\n\n${notes.join('\n')}` : text;
  }

  function appendQuestion(question) {
    const msg = appendMessage('user');
    msg.bubble.textContent = question;
    msg.meta.remove();
    return msg;
  }

  /** Renders a finished answer (streamed now or loaded with its conversation) into `msg`. */
  function finishAnswer(msg, question, answer, conversationId) {
    msg.node.classList.remove('streaming');
    const citations = (answer.citations || []).map((c) => withText(answer, c));
    const refusal = answer.refusal;
    const text = answer.answer || (refusal && refusal.message) || '';
    if (refusal) renderRefusal(msg, refusal, text);
    else renderAnswer(msg.bubble, text, citations);
    renderRoute(msg.meta, answer);
    msg.node.dataset.state = 'done';
    msg.node.dataset.refusal = refusal ? refusal.kind || 'unknown' : '';
    if (answer.answer_id) msg.node.dataset.answerId = answer.answer_id;
    msg.node.append(answerActions(question, answer, plainAnswer(text, citations), conversationId));
  }

  function setStreaming(on) {
    $('#send').hidden = on;
    $('#stop').hidden = !on;
    if (on) $('#stop').focus();
  }

  async function sendMessage() {
    if (state.streaming) return;
    const input = $('#chat-input');
    const question = input.value.trim();
    if (!question) return;
    clearError();
    input.value = '';
    const skill = $('#skill-picker').value || 'auto';

    appendQuestion(question);
    const msg = appendMessage('assistant');
    msg.node.classList.add('streaming');
    let text = '';
    const controller = new AbortController();
    state.streaming = controller;
    setStreaming(true);

    try {
      const conversationId = await ensureConversation(controller.signal);
      const req = { query: question, stream: true, conversation_id: conversationId };
      if (skill !== 'auto') req.skill = skill;
      const answer = await streamAsk(req, controller.signal, (piece) => {
        text += piece;
        // The whole text again: a table or list is only Markdown once its lines are in.
        renderAnswer(msg.bubble, text, []);
        scrollChat();
      });
      finishAnswer(msg, question, answer, conversationId);
      // The list shows the new turn count (and the title the first question gave).
      guard(loadConversations)();
    } catch (err) {
      msg.node.classList.remove('streaming');
      const stopped = err && err.name === 'AbortError';
      msg.node.classList.add(stopped ? 'stopped' : 'failed');
      msg.node.dataset.state = stopped ? 'stopped' : 'error';
      if (stopped) {
        renderAnswer(msg.bubble, text, []);
        msg.bubble.append(el('div', { class: 'stopped-note', text: '(stopped)' }));
      } else {
        msg.bubble.textContent = text || describe(err);
      }
      if (!stopped && !input.value) input.value = question; // to retry
      throw err;
    } finally {
      state.streaming = null;
      setStreaming(false);
      scrollChat();
      input.focus();
    }
  }

  function stopAnswer() {
    if (state.streaming) state.streaming.abort();
  }

  // ---------------------------------------------------------------------------------------
  // Conversations: stored by the server; the one shown is remembered across reloads

  function setConversation(conv) {
    state.conversation = conv ? { id: conv.id, title: conv.title || '' } : null;
    if (conv) localStorage.setItem(CONVERSATION_KEY, conv.id);
    else localStorage.removeItem(CONVERSATION_KEY);
    const title = $('#conv-title');
    title.textContent = conv ? conv.title || 'Untitled conversation' : 'New conversation';
    title.dataset.id = conv ? conv.id : '';
    for (const item of document.querySelectorAll('.conv-item')) {
      const active = Boolean(conv) && item.dataset.id === conv.id;
      item.classList.toggle('active', active);
      const open = item.querySelector('.conv-open');
      if (open) open.setAttribute('aria-current', String(active));
    }
  }

  /** The conversation of the next question: created on the first one. */
  async function ensureConversation(signal) {
    if (state.conversation) return state.conversation.id;
    const body = await api('POST', '/v1/conversations', {}, { signal });
    const conv = body && body.conversation;
    if (!conv || !conv.id) throw new Error('the server did not create a conversation');
    setConversation(conv);
    return conv.id;
  }

  function clearChatLog(message) {
    const log = $('#chat-log');
    log.textContent = '';
    if (message) log.append(el('div', { class: 'empty', id: 'chat-empty', text: message }));
  }

  function newConversation() {
    if (state.streaming) state.streaming.abort();
    setConversation(null);
    clearChatLog('New conversation. Ask a question.');
    closePanel();
    clearError();
    renderConversations();
    $('#chat-input').focus();
  }

  async function loadConversations() {
    const body = await api('GET', '/v1/conversations');
    state.conversations = (body && body.conversations) || [];
    // The server titles a conversation after its first question.
    const current = state.conversation && state.conversations.find((c) => c.id === state.conversation.id);
    if (current && (current.title || '') !== state.conversation.title) setConversation(current);
    renderConversations();
  }

  function renderConversations() {
    const list = $('#conv-list');
    list.textContent = '';
    // A conversation whose first question never got an answer (stopped, failed) has nothing to
    // resume; it is listed only while it is the open one.
    const shown = state.conversations.filter((c) => c.turns > 0 || (state.conversation && state.conversation.id === c.id));
    if (!shown.length) {
      list.append(el('li', { class: 'conv-empty', text: 'No conversations yet.' }));
      return;
    }
    for (const c of shown) list.append(conversationItem(c));
  }

  function conversationItem(c) {
    const active = Boolean(state.conversation) && state.conversation.id === c.id;
    const title = c.title || 'Untitled conversation';
    const turns = typeof c.turns === 'number' ? c.turns : (c.turns || []).length;
    const item = el('li', { class: `conv-item${active ? ' active' : ''}`, dataset: { testid: 'conversation-item', id: c.id } });
    const open = el('button', {
      type: 'button', class: 'conv-open', title, 'aria-current': String(active),
      dataset: { testid: 'conversation-open' }, onclick: guard(() => openConversation(c.id)),
    }, el('span', { class: 'conv-name', dataset: { testid: 'conversation-name' }, text: title }),
    el('span', { class: 'conv-meta', text: `${plural(turns, 'turn')} · ${ago(c.updated || c.created)}` }));
    const rename = el('button', {
      type: 'button', class: 'icon conv-action', title: 'Rename', 'aria-label': `Rename the conversation “${title}”`,
      dataset: { testid: 'conversation-rename' }, text: '✎', onclick: () => startRename(item, c),
    });
    const remove = el('button', {
      type: 'button', class: 'icon conv-action', title: 'Delete', 'aria-label': `Delete the conversation “${title}”`,
      dataset: { testid: 'conversation-delete' }, text: '×', onclick: guard(() => deleteConversation(c)),
    });
    item.append(open, rename, remove);
    return item;
  }

  /** Inline rename: Enter (or leaving the field) saves, Escape cancels. */
  function startRename(item, c) {
    const input = el('input', {
      type: 'text', class: 'conv-rename', value: c.title || '', maxlength: 200,
      'aria-label': 'Conversation title', dataset: { testid: 'conversation-title-input' },
    });
    let finished = false;
    const finish = guard(async (save) => {
      if (finished) return;
      finished = true;
      try {
        const title = input.value.trim();
        if (!save || !title || title === c.title) return;
        const body = await api('PATCH', `/v1/conversations/${enc(c.id)}`, { title });
        c.title = (body && body.conversation && body.conversation.title) || title;
        if (state.conversation && state.conversation.id === c.id) setConversation({ id: c.id, title: c.title });
      } finally {
        renderConversations();
      }
    });
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.isComposing) { ev.preventDefault(); finish(true); }
      if (ev.key === 'Escape') { ev.preventDefault(); ev.stopPropagation(); finish(false); }
    });
    input.addEventListener('blur', () => finish(true));
    item.textContent = '';
    item.append(input);
    input.focus();
    input.select();
  }

  async function deleteConversation(c) {
    const title = c.title || 'Untitled conversation';
    const turns = typeof c.turns === 'number' ? c.turns : (c.turns || []).length;
    if (!await confirmDialog(`Delete the conversation “${title}” and its ${plural(turns, 'turn')}?`, 'Delete')) return;
    await api('DELETE', `/v1/conversations/${enc(c.id)}`);
    if (state.conversation && state.conversation.id === c.id) newConversation();
    await loadConversations();
  }

  /** Shows a stored conversation, turn by turn, and makes it the current one. */
  async function openConversation(id) {
    if (state.streaming) state.streaming.abort();
    const body = await api('GET', `/v1/conversations/${enc(id)}`);
    const conv = body && body.conversation;
    if (!conv) throw new Error(`conversation ${id} came back empty`);
    closePanel();
    clearError();
    setConversation(conv);
    const turns = conv.turns || [];
    clearChatLog(turns.length ? '' : 'No questions in this conversation yet.');
    for (const turn of turns) {
      appendQuestion(turn.question);
      const msg = appendMessage('assistant');
      if (turn.answer) {
        finishAnswer(msg, turn.question, turn.answer, conv.id);
      } else {
        msg.node.dataset.state = 'error';
        msg.node.classList.add('failed');
        msg.bubble.textContent = '(no answer was saved)';
      }
    }
    renderConversations();
    scrollChat();
  }

  /** After a reload: the conversation that was open, if the server still has it. */
  async function resumeConversation() {
    const id = localStorage.getItem(CONVERSATION_KEY);
    if (!id || state.conversation || $('#chat-log').querySelector('.msg')) return;
    try {
      await openConversation(id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        setConversation(null);
        return;
      }
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Answer actions: copy, feedback

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return;
      } catch (_) { /* denied: fall back */ }
    }
    const area = el('textarea', { class: 'copy-buffer', readonly: true, 'aria-hidden': 'true', tabindex: '-1' });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } finally {
      area.remove();
    }
    if (!ok) throw new Error('the browser did not allow copying; select the text and copy it instead');
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';

  /** A thumb icon (drawn here: the page loads no icon font, and emoji fonts are not everywhere). */
  function thumbIcon(down) {
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', '16');
    svg.setAttribute('height', '16');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('class', `thumb-icon${down ? ' down' : ''}`);
    for (const d of ['M3 10h3v11H3z', 'M6 11l4-8c1.5 0 2.5 1 2.5 2.5V9H19c1.3 0 2.2 1.2 1.9 2.5l-1.5 7.5c-.2 1.2-1.2 2-2.4 2H6z']) {
      const path = document.createElementNS(SVG_NS, 'path');
      path.setAttribute('d', d);
      svg.append(path);
    }
    return svg;
  }

  /** The 👎 form's choice "no skill covers this question" (not a skill id: ids have no spaces). */
  const NO_SKILL = ' none';

  /** Copy, 👍 and 👎 (with "wrong skill" and a comment) under an answer. */
  function answerActions(question, answer, copyable, conversationId) {
    const bar = el('div', { class: 'answer-actions', dataset: { testid: 'answer-actions' } });
    const copy = el('button', {
      type: 'button', class: 'small secondary', title: 'Copy the answer and its sources',
      dataset: { testid: 'answer-copy' }, text: 'Copy',
    });
    copy.addEventListener('click', guard(async () => {
      await copyText(copyable);
      copy.textContent = 'Copied ✓';
      copy.dataset.copied = 'true';
      setTimeout(() => { copy.textContent = 'Copy'; }, 2000);
    }));
    const up = el('button', {
      type: 'button', class: 'small secondary vote', title: 'Good answer', 'aria-label': 'Good answer',
      'aria-pressed': 'false', dataset: { testid: 'feedback-up' },
    }, thumbIcon(false));
    const down = el('button', {
      type: 'button', class: 'small secondary vote', title: 'Bad answer', 'aria-label': 'Bad answer',
      'aria-pressed': 'false', 'aria-expanded': 'false', dataset: { testid: 'feedback-down' },
    }, thumbIcon(true));
    const status = el('span', { class: 'feedback-status', 'aria-live': 'polite' });

    const routed = (answer.route && answer.route.skills) || [];
    const skillSelect = el('select', { dataset: { testid: 'feedback-skill' } },
      el('option', { value: '', text: '— the skill was right / not sure —' }),
      el('option', { value: NO_SKILL, text: '— none: no skill covers this question —' }),
      state.skills.map((s) => el('option', { value: s.skill, text: routed.includes(s.skill) ? `${s.skill} (answered)` : s.skill })));
    const comment = el('textarea', {
      rows: 2, maxlength: 2000, placeholder: 'What was wrong or missing? (optional)',
      'aria-label': 'Comment', dataset: { testid: 'feedback-comment' },
    });
    const form = el('form', { class: 'feedback-form', hidden: true, dataset: { testid: 'feedback-form' } },
      el('label', {}, 'Wrong skill → the right one:', skillSelect),
      comment,
      el('div', { class: 'feedback-buttons' },
        el('button', { type: 'submit', class: 'small', dataset: { testid: 'feedback-send' }, text: 'Send feedback' }),
        el('button', {
          type: 'button', class: 'small secondary', text: 'Cancel',
          onclick: () => { form.hidden = true; down.setAttribute('aria-expanded', 'false'); down.focus(); },
        })));

    const send = async (rating, extra) => {
      const req = { query: question, rating, ...extra };
      if (answer.answer_id) req.answer_id = answer.answer_id;
      // Where the server finds the judged answer once it no longer holds it in memory.
      if (conversationId) req.conversation_id = conversationId;
      up.disabled = true;
      down.disabled = true;
      try {
        await api('POST', '/v1/feedback', req);
      } catch (err) {
        up.disabled = false;
        down.disabled = false;
        throw err;
      }
      (rating === 'up' ? up : down).setAttribute('aria-pressed', 'true');
      bar.dataset.feedback = rating;
      form.remove();
      down.removeAttribute('aria-expanded');
      status.textContent = '';
      status.append(el('span', {
        class: 'thanks', dataset: { testid: 'feedback-thanks' },
        text: rating === 'up' ? 'Thanks! Marked as a good answer.'
          : `Thanks! Your feedback was saved${extra.skill ? ` (right skill: ${extra.skill})` : extra.no_skill ? ' (no skill covers it)' : ''}.`,
      }));
    };
    up.addEventListener('click', guard(() => send('up', {})));
    down.addEventListener('click', () => {
      form.hidden = !form.hidden;
      down.setAttribute('aria-expanded', String(!form.hidden));
      if (!form.hidden) skillSelect.focus();
    });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const extra = {};
      if (skillSelect.value === NO_SKILL) extra.no_skill = true;
      else if (skillSelect.value) extra.skill = skillSelect.value;
      if (comment.value.trim()) extra.comment = comment.value.trim();
      guard(send)('down', extra);
    });
    bar.append(copy, up, down, status);
    return el('div', { class: 'answer-foot' }, bar, form);
  }

  // ---------------------------------------------------------------------------------------
  // Citation side panel

  function closePanel() {
    $('#chunk-panel').hidden = true;
    for (const a of document.querySelectorAll('a.cite.active')) a.classList.remove('active');
  }

  /** How well a chunk of the document matches the citation (0 = not at all). */
  function matchScore(chunk, cit) {
    const ct = normalize(chunk.text);
    const xt = normalize(cit.text);
    let score = 0;
    if (xt && ct) {
      if (ct === xt) score += 100;
      else if (ct.includes(xt) || xt.includes(ct)) score += 60;
      else if (xt.length > 40 && ct.includes(xt.slice(0, 40))) score += 30;
    }
    if (cit.heading && chunk.heading) {
      const ch = normalize(chunk.heading);
      const xh = normalize(cit.heading);
      if (ch === xh) score += 10;
      else if (ch.endsWith(xh) || xh.endsWith(ch)) score += 5;
    }
    if (cit.pages !== undefined && cit.pages !== null && formatPages(cit.pages) === formatPages(chunk.pages)) score += 1;
    return score;
  }

  // Pictures browsers show; a TIFF is offered as a file instead.
  const SHOWN_PICTURE = /\.(png|jpe?g|webp)$/i;

  /**
   * Where the page loads a picture from: its endpoint, or, when the server wants a token
   * (which an <img> cannot send), its bytes fetched with the token as a data: URL (the page's
   * CSP allows images from 'self' and data: only).
   */
  async function pictureSrc(url) {
    if (!token()) return url;
    const res = await check(await fetch(url, { headers: { Authorization: `Bearer ${token()}` } }));
    const blob = await res.blob();
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(blob);
    });
  }

  /** A cited picture in the panel: a thumbnail that opens the whole picture, or a TIFF's link. */
  async function renderPicture(cit) {
    const box = $('#chunk-picture');
    box.textContent = '';
    box.hidden = !cit.image;
    if (!cit.image) return;
    const pic = cit.image;
    const url = pictureUrl(cit.skill, pic.path);
    const name = String(pic.path).split('/').pop();
    const size = `${pic.width}×${pic.height} px · ${formatBytes(pic.bytes)}`;
    const label = cit.heading || citedPath(cit);
    if (!SHOWN_PICTURE.test(pic.path)) {
      const link = el('a', { href: url, download: name, dataset: { testid: 'picture-link' } }, `Download ${name}`);
      link.addEventListener('click', guard(async (ev) => {
        if (!token()) return;
        ev.preventDefault();
        el('a', { href: await pictureSrc(url), download: name }).click();
      }));
      box.append(link, el('div', { class: 'picture-meta', text: `${size} (browsers do not show TIFF)` }));
      return;
    }
    const src = await pictureSrc(url);
    if (String($('#chunk-panel').dataset.n) !== String(cit.n)) return; // another citation was opened meanwhile
    const thumb = el('img', {
      class: 'thumb', src, alt: label, loading: 'lazy', width: pic.width, height: pic.height,
      dataset: { testid: 'picture-thumb' },
    });
    const open = el('a', { href: url, class: 'picture-open', title: 'Show the whole picture' }, thumb);
    open.addEventListener('click', (ev) => {
      ev.preventDefault();
      showPicture(src, label, `${citedPath(cit)} · ${size}`);
    });
    box.append(open, el('div', { class: 'picture-meta', text: size }));
  }

  /** The whole picture, at its own size, in a dialog over the page. */
  function showPicture(src, label, sub) {
    const img = $('#picture-full');
    img.src = src;
    img.alt = label;
    $('#picture-title').textContent = label;
    $('#picture-sub').textContent = sub;
    const dialog = $('#picture-view');
    if (!dialog.open) dialog.showModal();
  }

  async function openCitation(cit) {
    const panel = $('#chunk-panel');
    panel.hidden = false;
    panel.dataset.n = cit.n;
    $('#chunk-title').textContent = `[${cit.n}] ${citedPath(cit)}`;
    $('#chunk-sub').textContent = [cit.heading, formatPages(cit.pages)].filter(Boolean).join(' · ');
    guard(renderPicture)(cit);
    renderMarkdown($('#chunk-cited'), cit.text);
    $('#chunk-doc-head').textContent = 'Document';
    const doc = $('#chunk-doc');
    doc.textContent = 'Loading the document…';

    const body = await api('GET', sourceUrl(cit.skill, cit.source)).catch((err) => {
      doc.textContent = '';
      throw err;
    });
    if (String(panel.dataset.n) !== String(cit.n)) return; // another citation was opened meanwhile
    const chunks = (body && body.chunks) || [];
    $('#chunk-doc-head').textContent = `Document · ${chunks.length} chunk${chunks.length === 1 ? '' : 's'}`;
    doc.textContent = '';
    let best = null;
    let bestScore = 0;
    let bestText = '';
    const nodes = chunks.map((c) => {
      const text = el('div', { class: 'chunk-text' });
      renderMarkdown(text, c.text);
      const node = el('div', { class: 'doc-chunk', dataset: { testid: 'doc-chunk', ordinal: c.ordinal } },
        el('div', { class: 'chunk-head', text: [`#${c.ordinal}`, c.heading, formatPages(c.pages)].filter((x) => x !== '' && x !== null && x !== undefined).join(' · ') }),
        text);
      const score = matchScore(c, cit);
      if (score > bestScore) { best = node; bestScore = score; bestText = c.text; }
      return node;
    });
    doc.append(...nodes);
    if (best) {
      best.classList.add('cited');
      best.dataset.cited = 'true';
      if (!cit.text) renderMarkdown($('#chunk-cited'), bestText);
      best.scrollIntoView({ block: 'nearest' });
    }
  }

  // ---------------------------------------------------------------------------------------
  // Documents: a skill's files, their chunks, upload and delete

  const documentsUrl = (skill) => `/v1/skills/${enc(skill)}/documents`;

  async function showDocuments() {
    if (!state.skills.length) await loadSkills();
    await loadDocuments();
    // A re-index started elsewhere (the Index tab, another upload) is followed here too.
    if (!state.docsPolling) {
      const body = await api('GET', '/v1/index');
      const job = body && body.job;
      if (job && job.state === 'running') await pollDocsJob();
    }
  }

  async function loadDocuments() {
    const skill = $('#docs-skill').value;
    if (!skill) return;
    const body = await api('GET', documentsUrl(skill));
    if ($('#docs-skill').value !== skill) return; // another skill was picked meanwhile
    state.docs = { skill, ...body };
    renderDocuments();
  }

  function docsBusy() {
    return $('#docs-job').dataset.state === 'running';
  }

  /** Upload and delete are offered only when the server takes writes and no re-index runs. */
  function updateDocsControls() {
    const d = state.docs;
    const writable = Boolean(d && d.writable);
    const enabled = writable && !docsBusy();
    $('#docs-readonly').classList.toggle('hidden', !d || writable);
    const drop = $('#docs-drop');
    drop.classList.toggle('disabled', !enabled);
    drop.setAttribute('aria-disabled', String(!enabled));
    $('#docs-file').disabled = !enabled;
    for (const b of document.querySelectorAll('#docs-table .doc-delete')) b.disabled = !enabled;
  }

  function renderDocuments() {
    const d = state.docs;
    const docs = d.documents || [];
    const exts = (d.extensions || []).map((e) => String(e).replace(/^\./, '').toLowerCase());
    $('#docs-file').setAttribute('accept', exts.map((e) => `.${e}`).join(','));
    const limits = [];
    if (exts.length) limits.push(`Formats: ${exts.join(', ')}`);
    if (d.max_upload_bytes) limits.push(`up to ${formatBytes(d.max_upload_bytes)} a file`);
    limits.push('the skill is re-indexed after each upload');
    $('#docs-drop-hint').textContent = limits.join(' · ');
    const chunks = docs.reduce((n, doc) => n + (doc.chunks || 0), 0);
    $('#docs-summary').textContent = `${plural(docs.length, 'document')} · ${plural(chunks, 'chunk')}`;

    $('#docs-table').dataset.skill = d.skill;
    const tbody = $('#docs-table tbody');
    tbody.textContent = '';
    if (!docs.length) {
      tbody.append(el('tr', {}, el('td', { colspan: 10, class: 'none', text: 'No documents yet. Drop files above to add some.' })));
    }
    const open = $('#docs-chunks');
    for (const doc of docs) {
      const errors = doc.errors || [];
      const status = String(doc.status || 'unknown');
      const name = el('button', {
        type: 'button', class: 'linkish doc-open', title: `Show the chunks of ${doc.name}`,
        dataset: { testid: 'doc-open' }, text: doc.name, onclick: guard(() => openDocument(doc)),
      });
      const errorCell = errors.length
        ? el('details', { class: 'doc-errors' }, el('summary', { text: plural(errors.length, 'error') }),
          el('ul', {}, errors.map((e) => el('li', { text: e }))))
        : dash();
      tbody.append(el('tr', {
        class: !open.hidden && open.dataset.name === doc.name ? 'chosen' : '',
        dataset: { testid: 'doc-row', name: doc.name, status, chunks: doc.chunks ?? '' },
      },
      el('td', { class: 'src doc-name' }, name, doc.title && !doc.name.endsWith(`/${doc.title}`) && doc.title !== doc.name.replace(/^.*\//, '').replace(/\.[^.]*$/, '')
        ? el('div', { class: 'rank', text: doc.title }) : null),
      el('td', {}, doc.format || dash(), doc.doc_type ? el('div', { class: 'rank', text: doc.doc_type }) : null),
      el('td', { class: 'num', text: formatBytes(doc.size) }),
      el('td', {}, doc.encoding || dash()),
      el('td', { class: 'num' }, doc.pages ?? dash()),
      el('td', { class: 'num', dataset: { testid: 'doc-chunks' } }, doc.chunks ?? dash()),
      el('td', { class: 'when', title: doc.indexed_at ? ago(doc.indexed_at) : null }, formatTime(doc.indexed_at) || dash()),
      el('td', {}, el('span', { class: `state ${status}`, text: status })),
      el('td', { class: 'errors' }, errorCell),
      el('td', {}, el('button', {
        type: 'button', class: 'small danger doc-delete', 'aria-label': `Delete ${doc.name}`,
        dataset: { testid: 'doc-delete', name: doc.name }, text: 'Delete',
        onclick: guard(() => deleteDocument(doc)),
      }))));
    }
    if (!open.hidden && !docs.some((doc) => doc.name === open.dataset.name && doc.status !== 'deleted')) closeDocument();
    updateDocsControls();
  }

  function closeDocument() {
    const panel = $('#docs-chunks');
    panel.hidden = true;
    panel.dataset.name = '';
    for (const tr of document.querySelectorAll('#docs-table tr.chosen')) tr.classList.remove('chosen');
  }

  async function openDocument(doc) {
    const skill = state.docs.skill;
    const panel = $('#docs-chunks');
    panel.hidden = false;
    panel.dataset.name = doc.name;
    for (const tr of document.querySelectorAll('#docs-table [data-testid="doc-row"]')) {
      tr.classList.toggle('chosen', tr.dataset.name === doc.name);
    }
    $('#docs-chunks-title').textContent = `${skill}/${doc.name}`;
    $('#docs-chunks-sub').textContent = 'Loading the chunks…';
    const list = $('#docs-chunks-list');
    list.textContent = '';
    let body;
    try {
      body = await api('GET', `${documentsUrl(skill)}/${enc(doc.name)}/chunks`);
    } catch (err) {
      $('#docs-chunks-sub').textContent = '';
      throw err;
    }
    if (panel.dataset.name !== doc.name) return; // another document was opened meanwhile
    const chunks = (body && body.chunks) || [];
    const facts = [plural(chunks.length, 'chunk'), doc.format, doc.pages ? plural(doc.pages, 'page') : null, formatBytes(doc.size)];
    $('#docs-chunks-sub').textContent = facts.filter(Boolean).join(' · ');
    if (!chunks.length) list.append(el('div', { class: 'none', text: 'This document has no indexed chunks.' }));
    for (const c of chunks) {
      const text = el('div', { class: 'chunk-text' });
      renderMarkdown(text, c.text);
      const head = [`#${c.ordinal}`, c.heading, formatPages(c.pages)].filter((x) => x !== '' && x !== null && x !== undefined);
      list.append(el('div', { class: 'doc-chunk', dataset: { testid: 'docs-chunk', ordinal: c.ordinal } },
        el('div', { class: 'chunk-head', text: head.join(' · ') }), text));
    }
  }

  const extensionOf = (name) => {
    const m = /\.([^./\\]+)$/.exec(name);
    return m ? m[1].toLowerCase() : '';
  };

  function hideConflict() {
    $('#docs-conflict').classList.add('hidden');
    state.pendingUpload = null;
  }

  function showConflict(files, message) {
    state.pendingUpload = files;
    $('#docs-conflict-text').textContent = `${message} Replace the indexed document with the uploaded file?`;
    $('#docs-conflict').classList.remove('hidden');
    $('#docs-replace').focus();
  }

  /** POSTs files as multipart `file` parts; then follows the re-index the upload starts. */
  async function uploadFiles(fileList, replace = false) {
    const files = Array.from(fileList || []);
    const d = state.docs;
    if (!files.length || !d) return;
    clearError();
    hideConflict();
    if (!d.writable) {
      showError('Uploads are off on this server: start it with `skillrag serve --allow-writes`.');
      return;
    }
    // What the server would refuse anyway, said before sending the bytes.
    const exts = (d.extensions || []).map((e) => String(e).replace(/^\./, '').toLowerCase());
    const problems = [];
    for (const f of files) {
      const ext = extensionOf(f.name);
      if (exts.length && !exts.includes(ext)) {
        problems.push(`${f.name}: ${ext ? `.${ext}` : 'a file without an extension'} cannot be indexed (supported: ${exts.join(', ')})`);
      } else if (f.size === 0) {
        problems.push(`${f.name}: the file is empty`);
      } else if (d.max_upload_bytes && f.size > d.max_upload_bytes) {
        problems.push(`${f.name}: ${formatBytes(f.size)} is over the upload limit of ${formatBytes(d.max_upload_bytes)}`);
      }
    }
    if (problems.length) {
      showError(`Not uploaded:\n${problems.join('\n')}`);
      return;
    }
    if (!replace) {
      const taken = files.map((f) => `knowledge/${f.name}`)
        .filter((n) => (d.documents || []).some((doc) => doc.name === n && doc.status !== 'deleted'));
      if (taken.length) {
        showConflict(files, `${taken.join(', ')} ${taken.length === 1 ? 'is' : 'are'} already in ${d.skill}.`);
        return;
      }
    }
    const form = new FormData();
    for (const f of files) form.append('file', f, f.name);
    const drop = $('#docs-drop');
    drop.classList.add('uploading');
    let body;
    try {
      const res = await fetch(`${documentsUrl(d.skill)}${replace ? '?replace=true' : ''}`, {
        method: 'POST', headers: headers(false), body: form,
      });
      await check(res);
      body = await res.json();
    } catch (err) {
      if (err instanceof ApiError) {
        if (err.status === 409 && /exist/i.test(err.message) && !replace) {
          const named = /`([^`]+)` already exists/.exec(err.message);
          showConflict(files, named ? `${named[1]} is already in ${d.skill}.` : err.message.replace(/\.?$/, '.'));
          return;
        }
        const why = {
          403: 'writes are off on this server (start it with `skillrag serve --allow-writes`)',
          409: 'a re-index is running; try again when it is done',
          413: `a file is over the upload limit${d.max_upload_bytes ? ` of ${formatBytes(d.max_upload_bytes)}` : ''}`,
          415: 'this type of file cannot be indexed',
          422: 'the file name is not accepted',
        }[err.status];
        if (why) {
          showError(`Upload refused: ${why}.\n${describe(err)}`);
          return;
        }
      }
      throw err;
    } finally {
      drop.classList.remove('uploading');
    }
    const names = ((body && body.documents) || []).map((x) => x.name);
    await followJob(body && body.job, `Uploaded ${names.join(', ') || 'the files'} to ${d.skill}.`);
  }

  async function deleteDocument(doc) {
    const skill = state.docs.skill;
    const ok = await confirmDialog(
      `Delete ${doc.name} from ${skill}? The file is removed from the skill's folder and the skill is re-indexed without it.`,
      'Delete');
    if (!ok) return;
    clearError();
    const body = await api('DELETE', `${documentsUrl(skill)}/${enc(doc.name)}`);
    if ($('#docs-chunks').dataset.name === doc.name) closeDocument();
    await followJob(body && body.job, `Deleted ${(body && body.deleted) || doc.name} from ${skill}.`);
  }

  /** Shows the re-index an upload or delete started until it is done, then the new list. */
  async function followJob(job, note) {
    const box = $('#docs-job');
    renderJobInto(box, job, note);
    box.dataset.note = note || '';
    updateDocsControls();
    // The new or deleted file shows at once (pending, or deleted) while the re-index runs.
    await loadDocuments();
    await pollDocsJob();
  }

  async function pollDocsJob() {
    if (state.docsPolling) clearTimeout(state.docsPolling);
    state.docsPolling = null;
    const box = $('#docs-job');
    const job = await fetchJob(pollDocsJob, (timer) => { state.docsPolling = timer; });
    if (job === undefined) return;
    renderJobInto(box, job, box.dataset.note);
    updateDocsControls();
    if (job && job.state === 'running') {
      state.docsPolling = setTimeout(guard(pollDocsJob), DOCS_POLL_MS);
      return;
    }
    box.dataset.note = '';
    await loadDocuments();
    await loadSkills();
    await loadHealth();
    if (job && job.state === 'failed') showError(`re-index #${job.id} failed: ${job.message || 'no message'}`);
  }

  // ---------------------------------------------------------------------------------------
  // Gaps: what the knowledge base did not answer well, by cause

  const CAUSES = [
    ['content', 'Not in the knowledge', 'Refused: no document answers these. Add knowledge that does.'],
    ['retrieval', 'Answered badly', 'Answered but rated down: the right passages were not found or not used. Try them in Retrieval testing.'],
    ['routing', 'Wrong skill', 'Rated down naming the right skill, or saying no skill covers it: the router got it wrong (skillrag tune learns from these).'],
  ];

  async function loadGaps() {
    const skill = $('#gaps-skill').value;
    const body = await api('GET', `/v1/gaps?limit=500${skill ? `&skill=${enc(skill)}` : ''}`);
    renderGaps((body && body.gaps) || []);
  }

  /** Opens a gap's question in Retrieval testing, searched in its skill. */
  function searchGap(g) {
    $('#search-input').value = g.query;
    const skill = $('#search-skill');
    skill.value = g.skill && state.skills.some((s) => s.skill === g.skill) ? g.skill : '';
    location.hash = 'retrieval';
    guard(runSearch)();
  }

  function renderGaps(gaps) {
    const box = $('#gaps-groups');
    box.textContent = '';
    const groups = new Map(CAUSES.map(([cause]) => [cause, []]));
    for (const g of gaps) {
      const cause = g.cause || 'content';
      if (!groups.has(cause)) groups.set(cause, []);
      groups.get(cause).push(g);
    }
    for (const [cause, list] of groups) {
      const [, label, help] = CAUSES.find(([c]) => c === cause) || [cause, cause, ''];
      const asked = list.reduce((n, g) => n + (g.count || 0), 0);
      const section = el('section', { class: 'gap-group', dataset: { testid: 'gap-group', cause } },
        el('h2', {}, label, ' ', el('span', { class: 'chip', text: `${plural(list.length, 'question')} · asked ${asked}×` })),
        help ? el('p', { class: 'hint', text: help }) : null);
      if (!list.length) {
        section.append(el('div', { class: 'gap-none', text: 'Nothing here.' }));
      } else {
        const tbody = el('tbody');
        for (const g of list) {
          // A misroute's skill is the one the user named as right.
          const skillCell = !g.skill ? el('span', { class: 'none', text: 'no skill' })
            : cause === 'routing' ? el('span', { title: 'the skill that should have answered', text: `→ ${g.skill}` }) : g.skill;
          const comments = (g.comments || []).slice(0, 3).map((c) => el('div', { class: 'gap-comment', text: `“${c}”` }));
          tbody.append(el('tr', { dataset: { testid: 'gap-row', cause, skill: g.skill || '' } },
            el('td', { class: 'skill' }, skillCell),
            el('td', { class: 'question' }, el('div', { text: g.query }), comments),
            el('td', {}, g.kind ? el('span', { class: 'chip', text: g.kind }) : dash()),
            el('td', { class: 'num', text: String(g.count ?? '') }),
            el('td', { class: 'when', title: formatTime(g.first_seen) ? `first seen ${formatTime(g.first_seen)}` : null },
              formatTime(g.last_seen) || dash()),
            el('td', {}, el('button', {
              type: 'button', class: 'small secondary', title: 'Search this question in Retrieval testing',
              dataset: { testid: 'gap-search' }, text: 'Search', onclick: () => searchGap(g),
            }))));
        }
        section.append(el('div', { class: 'table-wrap' }, el('table', { class: 'data' },
          el('thead', {}, el('tr', {},
            el('th', { text: 'skill' }), el('th', { text: 'question' }), el('th', { text: 'kind' }),
            el('th', { class: 'num', text: 'count' }), el('th', { text: 'last seen' }), el('th'))),
          tbody)));
      }
      box.append(section);
    }
  }

  // ---------------------------------------------------------------------------------------
  // Retrieval testing

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
    return out;
  }

  function resetSearchControls() {
    for (const id of ['#search-min-score', '#search-bm25-weight', '#search-dense-weight', '#search-source', '#search-dir']) $(id).value = '';
    for (const c of document.querySelectorAll('#search-form input[name="doc-type"]')) c.checked = false;
  }

  async function runSearch() {
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

  // ---------------------------------------------------------------------------------------
  // Index

  function renderSkillsTable() {
    const tbody = $('#skills-table tbody');
    tbody.textContent = '';
    const running = $('#index-job').dataset.state === 'running';
    for (const s of state.skills) {
      const idx = s.index || {};
      const details = Object.entries(idx).filter(([k]) => k !== 'state').map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`);
      const stateName = String(idx.state || 'unknown');
      tbody.append(el('tr', { dataset: { testid: 'skill-row', skill: s.skill } },
        el('td', {}, el('b', { text: s.skill })),
        el('td', { class: 'desc', text: s.description || '' }),
        el('td', { class: 'num', text: s.files ?? '' }),
        el('td', { class: 'num', text: s.chunks ?? '' }),
        el('td', { class: 'num', text: s.generation ?? '' }),
        el('td', {}, el('span', { class: `state ${stateName}`, title: details.join('\n') || null, text: stateName }),
          details.length ? el('div', { class: 'rank', text: details.join(', ') }) : null),
        el('td', { class: 'num', text: formatBytes(s.size_bytes ?? s.size) }),
        el('td', {}, el('button', {
          type: 'button', class: 'small secondary reindex-one', disabled: running,
          dataset: { testid: 'reindex-skill', skill: s.skill },
          onclick: guard(() => startIndex([s.skill])),
          text: 'Re-index',
        }))));
    }
  }

  /** A re-index report: one row per skill, then the diagnostics (shared with Documents). */
  function jobReport(report) {
    const wrap = el('div', { class: 'job-report', dataset: { testid: 'job-report' } });
    const skills = report.skills || [];
    if (skills.length) {
      const cols = [
        ['files', 'files'], ['files_changed', 'changed'], ['files_unchanged', 'unchanged'], ['files_deleted', 'deleted'],
        ['files_failed', 'failed'], ['chunks', 'chunks'], ['chunks_new', 'new chunks'], ['embedded', 'embedded'],
      ];
      const tbody = el('tbody');
      for (const r of skills) {
        tbody.append(el('tr', { class: r.error ? 'failed' : '', dataset: { testid: 'job-skill-row', skill: r.skill } },
          el('td', { class: 'skill' }, el('b', { text: r.skill })),
          cols.map(([key]) => el('td', { class: `num${key === 'files_failed' && r[key] ? ' bad' : ''}` }, r[key] ?? dash())),
          el('td', { class: 'num' }, typeof r.seconds === 'number' ? `${r.seconds.toFixed(1)} s` : dash()),
          el('td', { class: 'num', title: r.generation === null ? 'already up to date: nothing published' : null },
            r.generation ?? el('span', { class: 'none', text: 'unchanged' })),
          el('td', { class: 'error-text' }, r.error || (r.rebuilt ? `rebuilt: ${r.rebuilt}` : ''))));
      }
      wrap.append(el('div', { class: 'table-wrap' }, el('table', { class: 'data compact' },
        el('thead', {}, el('tr', {}, el('th', { text: 'skill' }), cols.map(([, label]) => el('th', { class: 'num', text: label })),
          el('th', { class: 'num', text: 'seconds' }), el('th', { class: 'num', text: 'generation' }), el('th', { text: 'error' }))),
        tbody)));
    }
    const diags = report.diagnostics || [];
    const list = el('ul', { class: 'diagnostics', dataset: { testid: 'job-diagnostics' } });
    for (const d of diags) {
      const where = `${d.path}${d.line ? `:${d.line}` : ''}`;
      const sev = String(d.severity || 'warning').toLowerCase();
      list.append(el('li', { class: `diag ${sev}`, dataset: { testid: 'job-diagnostic' } },
        el('code', { text: where }), ' ', el('span', { class: `sev ${sev}`, text: sev }), ' ', d.message));
    }
    wrap.append(el('div', { class: 'diag-head', text: diags.length ? plural(diags.length, 'diagnostic') : 'no diagnostics' }));
    if (diags.length) wrap.append(list);
    const extra = [];
    if (typeof report.seconds === 'number') extra.push(`${report.seconds.toFixed(1)} s in all`);
    if (report.removed && report.removed.length) extra.push(`indexes removed: ${report.removed.join(', ')}`);
    if (report.cache_dropped) extra.push(`${report.cache_dropped} damaged cache records dropped`);
    for (const r of report.repaired || []) extra.push(`repaired: ${r}`);
    if (extra.length) wrap.append(el('div', { class: 'hint', text: extra.join(' · ') }));
    return wrap;
  }

  /** A re-index job (its state, what it did) into `box`; `note` says what started it. */
  function renderJobInto(box, job, note) {
    if (!job) {
      box.hidden = true;
      box.dataset.state = '';
      box.textContent = '';
      return;
    }
    box.hidden = false;
    box.dataset.state = job.state;
    box.dataset.job = job.id;
    box.textContent = '';
    const now = Date.now() / 1000;
    const took = job.finished ? job.finished - job.started : now - job.started;
    const skills = (job.skills || []).join(', ') || 'all skills';
    box.append(el('div', { class: 'job-head' }, el('span', { class: `state ${job.state}`, text: job.state }),
      ` re-index #${job.id} of ${skills}${Number.isFinite(took) ? ` · ${Math.max(0, took).toFixed(0)} s` : ''}`,
      note ? el('span', { class: 'job-note', text: ` — ${note}` }) : null));
    if (job.state === 'running') {
      box.append(el('div', { class: 'job-progress', role: 'progressbar', 'aria-label': 'Re-index in progress' }, el('span')));
    }
    if (job.message) box.append(el('div', { class: 'job-message', dataset: { testid: 'index-message' }, text: job.message }));
    if (job.report) box.append(jobReport(job.report));
  }

  function renderJob(job) {
    renderJobInto($('#index-job'), job);
    const running = Boolean(job) && job.state === 'running';
    $('#reindex-all').disabled = running;
    for (const b of document.querySelectorAll('.reindex-one')) b.disabled = running;
  }

  function stopPolling() {
    if (state.polling) clearTimeout(state.polling);
    state.polling = null;
  }

  /**
   * The running or last re-index job (null when there is none). Rate-limited or busy: `again`
   * is scheduled after the delay the server asks for, its timer handed to `setTimer`, and the
   * result is undefined.
   */
  async function fetchJob(again, setTimer) {
    try {
      const body = await api('GET', '/v1/index');
      return (body && body.job) || null;
    } catch (err) {
      if (err instanceof ApiError && (err.status === 429 || err.status === 503)) {
        const wait = Math.max(1, parseInt(err.retryAfter, 10) || 1) * 1000;
        setTimer(setTimeout(guard(again), wait));
        return undefined;
      }
      throw err;
    }
  }

  async function pollJob() {
    stopPolling();
    const job = await fetchJob(pollJob, (timer) => { state.polling = timer; });
    if (job === undefined) return;
    renderJob(job);
    if (job && job.state === 'running') {
      state.polling = setTimeout(guard(pollJob), POLL_MS);
    } else if (job) {
      // Finished: the new generation is being served; refresh everything that shows it.
      await loadSkills();
      renderSkillsTable();
      await loadHealth();
      if (job.state === 'failed') showError(`re-index #${job.id} failed: ${job.message || 'no message'}`);
    }
  }

  async function startIndex(skills) {
    clearError();
    const req = { skills };
    if ($('#reindex-rebuild').checked) req.rebuild = true;
    try {
      const body = await api('POST', '/v1/index', req);
      renderJob(body && body.job);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        showError(describe(err));
      } else {
        throw err;
      }
    }
    await pollJob();
  }

  async function refreshIndexView() {
    await loadSkills();
    renderSkillsTable();
    const body = await api('GET', '/v1/index');
    renderJob(body && body.job);
    if (body && body.job && body.job.state === 'running' && !state.polling) await pollJob();
  }

  // ---------------------------------------------------------------------------------------
  // Wiring

  function init() {
    for (const v of VIEWS) {
      $(`#tab-${v}`).addEventListener('click', () => {
        if (location.hash !== `#${v}`) location.hash = v;
        else showView();
      });
    }
    window.addEventListener('hashchange', showView);

    $('#error-close').addEventListener('click', clearError);

    $('#auth-bar').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const value = $('#auth-token').value.trim();
      if (value) localStorage.setItem(TOKEN_KEY, value);
      else localStorage.removeItem(TOKEN_KEY);
      $('#auth-bar').classList.add('hidden');
      clearError();
      guard(loadAll)();
    });
    $('#auth-forget').addEventListener('click', () => {
      localStorage.removeItem(TOKEN_KEY);
      $('#auth-token').value = '';
    });

    $('#chat-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      guard(sendMessage)();
    });
    $('#chat-input').addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
        ev.preventDefault();
        guard(sendMessage)();
      }
    });
    $('#chat-clear').addEventListener('click', newConversation);
    $('#stop').addEventListener('click', stopAnswer);
    $('#skill-picker').addEventListener('change', updateSkillHint);
    $('#chunk-close').addEventListener('click', closePanel);
    document.addEventListener('keydown', (ev) => {
      // Escape closes the picture dialog first (the browser does), the panel the next time.
      if (ev.key === 'Escape' && !$('#chunk-panel').hidden && !$('#picture-view').open && !$('#confirm-view').open) closePanel();
    });
    const pictureView = $('#picture-view');
    $('#picture-close').addEventListener('click', () => pictureView.close());
    // A click on the backdrop (the dialog itself, outside its content) closes it too.
    pictureView.addEventListener('click', (ev) => { if (ev.target === pictureView) pictureView.close(); });

    $('#search-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      guard(runSearch)();
    });
    $('#search-reset').addEventListener('click', resetSearchControls);

    $('#docs-skill').addEventListener('change', () => {
      localStorage.setItem(DOCS_SKILL_KEY, $('#docs-skill').value);
      closeDocument();
      hideConflict();
      guard(loadDocuments)();
    });
    $('#docs-refresh').addEventListener('click', guard(loadDocuments));
    $('#docs-chunks-close').addEventListener('click', closeDocument);
    const drop = $('#docs-drop');
    const fileInput = $('#docs-file');
    const canDrop = () => !drop.classList.contains('disabled');
    fileInput.addEventListener('change', () => {
      const files = Array.from(fileInput.files || []);
      fileInput.value = '';
      guard(uploadFiles)(files);
    });
    drop.addEventListener('click', (ev) => {
      // The "choose files" label opens the picker itself; anywhere else in the zone does too.
      if (ev.target.closest('label') || !canDrop()) return;
      fileInput.click();
    });
    for (const name of ['dragenter', 'dragover']) {
      drop.addEventListener(name, (ev) => {
        ev.preventDefault();
        ev.dataTransfer.dropEffect = canDrop() ? 'copy' : 'none';
        if (canDrop()) drop.classList.add('dragging');
      });
    }
    drop.addEventListener('dragleave', (ev) => {
      if (!drop.contains(ev.relatedTarget)) drop.classList.remove('dragging');
    });
    drop.addEventListener('drop', (ev) => {
      ev.preventDefault();
      drop.classList.remove('dragging');
      if (!canDrop()) return;
      guard(uploadFiles)(ev.dataTransfer.files);
    });
    // A file dropped next to the zone must not make the browser navigate away to it.
    for (const name of ['dragover', 'drop']) {
      window.addEventListener(name, (ev) => {
        if (ev.dataTransfer && Array.from(ev.dataTransfer.types || []).includes('Files')) ev.preventDefault();
      });
    }
    $('#docs-replace').addEventListener('click', () => {
      const files = state.pendingUpload;
      hideConflict();
      if (files) guard(uploadFiles)(files, true);
    });
    $('#docs-conflict-cancel').addEventListener('click', hideConflict);

    $('#gaps-skill').addEventListener('change', guard(loadGaps));
    $('#gaps-refresh').addEventListener('click', guard(loadGaps));

    $('#reindex-all').addEventListener('click', guard(() => startIndex(state.skills.map((s) => s.skill))));
    $('#index-refresh').addEventListener('click', guard(refreshIndexView));

    showView();
    guard(loadAll)();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
