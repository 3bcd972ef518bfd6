// skillrag web page: chat with citations, retrieval testing, index status.
// Plain ES2020; talks to the HTTP API of `skillrag serve` (docs/http-api.md). Its one
// dependency is markdown-it (assets/markdown-it.min.js, vendored and embedded, loaded before
// this file) to render answers and passages as Markdown: a CommonMark-tested parser whose
// documented safe mode (`html: false`) escapes raw HTML, which is simpler to trust than a
// renderer of our own. Knowledge files are untrusted for the browser; see "Markdown" below.
'use strict';

(() => {
  const TOKEN_KEY = 'skillrag.token';
  const POLL_MS = 500;

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
    messages: [],         // the conversation sent as `messages`
    streaming: null,      // AbortController of the answer being streamed
    polling: null,        // timer of the index-job poll
    loaded: false,
  };

  // ---------------------------------------------------------------------------------------
  // Tabs

  const VIEWS = ['chat', 'retrieval', 'index'];

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
    fillSearchSkills();
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

  function fillSearchSkills() {
    const select = $('#search-skill');
    const previous = select.value;
    select.textContent = '';
    select.append(el('option', { value: '', text: 'all skills' }));
    for (const s of state.skills) select.append(el('option', { value: s.skill, text: s.skill }));
    select.value = state.skills.some((s) => s.skill === previous) ? previous : '';
  }

  async function loadAll() {
    await loadHealth();
    await loadSkills();
    await loadModels();
    state.loaded = true;
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

  function renderRoute(meta, extras, model) {
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
    if (model && model !== 'skillrag/auto') parts.push(` · model ${model}`);
    meta.append('route: ', ...parts);
    meta.dataset.testid = 'route';
  }

  function renderRefusal(msg, refusal, text) {
    msg.bubble.replaceWith(el('div', { class: 'refusal', dataset: { testid: 'refusal', kind: refusal.kind || '' } },
      el('div', { class: 'kind', text: `refused · ${refusal.kind || 'unknown'}` }),
      el('div', { class: 'refusal-text', text: text || refusal.message || '' })));
  }

  /**
   * POSTs a streaming chat completion and calls onChunk for every parsed `data:` event, until
   * `[DONE]` or the end of the body. Falls back to a plain JSON completion if the server answers
   * without SSE.
   */
  async function streamChat(body, signal, onChunk) {
    const res = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { ...headers(true), Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
    await check(res);
    const type = res.headers.get('Content-Type') || '';
    if (!type.includes('text/event-stream')) {
      const full = await res.json();
      const choice = (full.choices || [])[0] || {};
      onChunk({ ...full, choices: [{ index: 0, delta: { content: (choice.message || {}).content || '' }, finish_reason: 'stop' }] });
      return;
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let data = [];
    const dispatch = () => {
      if (!data.length) return false;
      const payload = data.join('\n');
      data = [];
      if (payload.trim() === '[DONE]') return true;
      let chunk;
      try {
        chunk = JSON.parse(payload);
      } catch (_) {
        throw new Error(`unreadable stream event: ${payload.slice(0, 120)}`);
      }
      if (chunk && chunk.error) throw new ApiError(chunk.error.code || 500, chunk, 'stream error');
      onChunk(chunk);
      return false;
    };
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (dispatch()) { reader.cancel().catch(() => {}); return; }
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        } // `event:`, `id:`, `retry:` and `:` comments are ignored
      }
      if (done) {
        if (buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''));
        dispatch();
        return;
      }
    }
  }

  async function sendMessage() {
    if (state.streaming) return;
    const input = $('#chat-input');
    const question = input.value.trim();
    if (!question) return;
    clearError();
    input.value = '';
    const skill = $('#skill-picker').value || 'auto';
    const model = `skillrag/${skill}`;

    const userMsg = appendMessage('user');
    userMsg.bubble.textContent = question;
    userMsg.meta.remove();
    state.messages.push({ role: 'user', content: question });

    const msg = appendMessage('assistant');
    msg.node.classList.add('streaming');
    let text = '';
    let extras = null;
    let citations = [];
    const controller = new AbortController();
    state.streaming = controller;
    $('#send').disabled = true;

    try {
      await streamChat({ model, messages: state.messages, stream: true }, controller.signal, (chunk) => {
        const choice = (chunk.choices || [])[0];
        const piece = choice && choice.delta && choice.delta.content;
        if (chunk.citations) citations = chunk.citations;
        if (chunk.skillrag) extras = chunk.skillrag;
        if (piece) {
          text += piece;
          // The whole text again: a table or list is only Markdown once its lines are in.
          renderAnswer(msg.bubble, text, citations);
          scrollChat();
        }
      });
      msg.node.classList.remove('streaming');
      const refusal = extras && extras.refusal;
      if (refusal) renderRefusal(msg, refusal, text);
      else renderAnswer(msg.bubble, text, citations);
      renderRoute(msg.meta, extras, model);
      msg.node.dataset.state = 'done';
      msg.node.dataset.refusal = refusal ? refusal.kind || 'unknown' : '';
      state.messages.push({ role: 'assistant', content: text });
    } catch (err) {
      msg.node.classList.remove('streaming');
      msg.node.classList.add('failed');
      msg.node.dataset.state = 'error';
      msg.bubble.textContent = text || (err && err.name === 'AbortError' ? '(stopped)' : describe(err));
      // The question got no answer: take it out of the history so a retry starts clean.
      state.messages.pop();
      throw err;
    } finally {
      state.streaming = null;
      $('#send').disabled = false;
      scrollChat();
      input.focus();
    }
  }

  function newConversation() {
    if (state.streaming) state.streaming.abort();
    state.messages = [];
    const log = $('#chat-log');
    log.textContent = '';
    log.append(el('div', { class: 'empty', id: 'chat-empty', text: 'New conversation. Ask a question.' }));
    closePanel();
    clearError();
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
        el('td', { class: 'num' }, num(c.vocabulary, 3)),
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

  function renderJob(job) {
    const box = $('#index-job');
    if (!job) {
      box.hidden = true;
      box.dataset.state = '';
      return;
    }
    box.hidden = false;
    box.dataset.state = job.state;
    box.dataset.job = job.id;
    box.textContent = '';
    const now = Date.now() / 1000;
    const took = job.finished ? job.finished - job.started : now - job.started;
    const skills = (job.skills || []).join(', ') || 'all skills';
    box.append(el('span', { class: `state ${job.state}`, text: job.state }),
      ` re-index #${job.id} of ${skills} · ${Number.isFinite(took) ? `${Math.max(0, took).toFixed(0)} s` : ''}`);
    if (job.message) box.append(el('div', { dataset: { testid: 'index-message' }, text: job.message }));
    if (job.report) {
      box.append(el('details', {}, el('summary', { text: 'report' }),
        el('pre', { text: JSON.stringify(job.report, null, 2) })));
    }
    const running = job.state === 'running';
    $('#reindex-all').disabled = running;
    for (const b of document.querySelectorAll('.reindex-one')) b.disabled = running;
  }

  function stopPolling() {
    if (state.polling) clearTimeout(state.polling);
    state.polling = null;
  }

  async function pollJob() {
    stopPolling();
    let body;
    try {
      body = await api('GET', '/v1/index');
    } catch (err) {
      // Rate-limited or busy: keep polling, after the delay the server asks for.
      if (err instanceof ApiError && (err.status === 429 || err.status === 503)) {
        const wait = Math.max(1, parseInt(err.retryAfter, 10) || 1) * 1000;
        state.polling = setTimeout(guard(pollJob), wait);
        return;
      }
      throw err;
    }
    const job = body && body.job;
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
    $('#skill-picker').addEventListener('change', updateSkillHint);
    $('#chunk-close').addEventListener('click', closePanel);
    document.addEventListener('keydown', (ev) => {
      // Escape closes the picture dialog first (the browser does), the panel the next time.
      if (ev.key === 'Escape' && !$('#chunk-panel').hidden && !$('#picture-view').open) closePanel();
    });
    const pictureView = $('#picture-view');
    $('#picture-close').addEventListener('click', () => pictureView.close());
    // A click on the backdrop (the dialog itself, outside its content) closes it too.
    pictureView.addEventListener('click', (ev) => { if (ev.target === pictureView) pictureView.close(); });

    $('#search-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      guard(runSearch)();
    });

    $('#reindex-all').addEventListener('click', guard(() => startIndex(state.skills.map((s) => s.skill))));
    $('#index-refresh').addEventListener('click', guard(refreshIndexView));

    showView();
    guard(loadAll)();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
