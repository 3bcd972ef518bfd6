// skillrag web page, a knowledge-base workbench: chat with citations in stored conversations
// (with feedback on answers), skills created, edited and deleted, a skill's documents (upload, delete, chunks), retrieval testing,
// knowledge gaps and index status.
// Plain ES2020 modules, no build step; talks to the HTTP API of `skillrag serve`
// (docs/http-api.md). This entry module switches the tabs, holds the token form and loads what
// every view needs; each view is a module of js/views/ with an init (wire its controls, once)
// and a show (its tab was opened); what they share is in js/ (state.js is the shared state).
// Its one dependency, markdown-it, is a classic script loaded before this one (js/markdown.js).
import { $ } from './js/dom.js';
import { clearError, guard } from './js/ui.js';
import { state, TOKEN_KEY } from './js/state.js';
import { loadHealth, loadModels, loadSkills } from './js/skills.js';
import * as chat from './js/views/chat.js';
import * as skills from './js/views/skills.js';
import * as documents from './js/views/documents.js';
import * as search from './js/views/search.js';
import * as gaps from './js/views/gaps.js';
import * as index from './js/views/index.js';

// ---------------------------------------------------------------------------------------
// Tabs

// The tab names (the URL's #hash) and their views, in the order of the tab bar.
const VIEW_MODULES = { chat, skills, documents, retrieval: search, gaps, index };
const VIEWS = Object.keys(VIEW_MODULES);

function currentView() {
  const v = location.hash.replace(/^#/, '');
  return VIEWS.includes(v) ? v : 'chat';
}

function showView() {
  const view = currentView();
  // An error belongs to what was done in the view it came from.
  clearError();
  for (const v of VIEWS) {
    $(`#view-${v}`).hidden = v !== view;
    const tab = $(`#tab-${v}`);
    tab.classList.toggle('active', v === view);
    tab.setAttribute('aria-selected', String(v === view));
  }
  VIEW_MODULES[view].show();
}

async function loadAll() {
  await loadHealth();
  await loadSkills();
  await loadModels();
  state.loaded = true;
  if (currentView() === 'documents') await documents.loadDocuments();
  await chat.load();
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

  // In the order the views were wired before they were modules (listeners on shared targets,
  // such as document's keydown, keep their order).
  chat.init();
  search.init();
  documents.init();
  skills.init();
  gaps.init();
  index.init();

  showView();
  guard(loadAll)();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
