// The Documents view: a skill's files, their chunks, upload and delete.
import { $, dash, el } from '../dom.js';
import { ago, formatBytes, formatPages, formatTime, plural } from '../format.js';
import { renderMarkdown } from '../markdown.js';
import { api, ApiError, check, enc, headers } from '../api.js';
import { clearError, confirmDialog, describe, guard, showError } from '../ui.js';
import { DOCS_SKILL_KEY, state } from '../state.js';
import { loadHealth, loadSkills } from '../skills.js';
import { fetchJob, renderJobInto } from '../jobs.js';
import { parseMetadata } from './search.js';

const DOCS_POLL_MS = 1000;

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

export async function loadDocuments() {
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
  $('#docs-import-url').disabled = !enabled;
  $('#docs-import-go').disabled = !enabled;
  for (const b of document.querySelectorAll('#docs-table .doc-delete')) b.disabled = !enabled;
  const selected = state.docsSelected.size;
  $('#docs-delete-selected').disabled = !enabled || selected === 0;
  $('#docs-delete-selected').textContent = selected ? `Delete selected (${selected})` : 'Delete selected';
  $('#docs-delete-selected').hidden = !writable;
  $('#docs-select-all').disabled = !writable;
  updatePresetControls();
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
    tbody.append(el('tr', {}, el('td', { colspan: 11, class: 'none', text: 'No documents yet. Drop files above to add some.' })));
  }
  const open = $('#docs-chunks');
  const shown = pageOf(docs);
  if (docs.length && !shown.length) {
    tbody.append(el('tr', {}, el('td', { colspan: 11, class: 'none', text: 'No document matches the filter.' })));
  }
  for (const doc of shown) {
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
    el('td', { class: 'pick' }, el('input', {
      type: 'checkbox', class: 'doc-select', 'aria-label': `Select ${doc.name}`, dataset: { testid: 'doc-select', name: doc.name },
      checked: state.docsSelected.has(doc.name),
      onchange: (ev) => { if (ev.target.checked) state.docsSelected.add(doc.name); else state.docsSelected.delete(doc.name); updateDocsControls(); },
    })),
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

// -- Filter, sort, pages and the selection --------------------------------------------------

const PAGE_SIZE = 50;

/** The documents shown: those the filter matches, sorted, one page of them. */
function pageOf(docs) {
  const view = state.docsView;
  const needle = view.filter.trim().toLowerCase();
  const matching = docs.filter((d) => !needle || `${d.name} ${d.title || ''}`.toLowerCase().includes(needle));
  const key = view.sort;
  matching.sort((a, b) => {
    const x = a[key] ?? '';
    const y = b[key] ?? '';
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return order * view.dir || a.name.localeCompare(b.name);
  });
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  view.page = Math.min(view.page, pages - 1);
  const first = view.page * PAGE_SIZE;
  const pager = $('#docs-pager');
  pager.hidden = matching.length <= PAGE_SIZE;
  $('#docs-page').textContent = `${matching.length ? first + 1 : 0}–${Math.min(first + PAGE_SIZE, matching.length)} of ${matching.length}`;
  $('#docs-prev').disabled = view.page === 0;
  $('#docs-next').disabled = view.page >= pages - 1;
  for (const th of document.querySelectorAll('#docs-table th[data-sort]')) {
    th.dataset.sorted = th.dataset.sort === key ? (view.dir > 0 ? 'up' : 'down') : '';
  }
  // Only what is listed can stay selected.
  for (const name of [...state.docsSelected]) if (!docs.some((d) => d.name === name)) state.docsSelected.delete(name);
  return matching.slice(first, first + PAGE_SIZE);
}

/** Imports the page at the URL typed (fetched by the server), then follows the re-index. */
async function importUrl(ev) {
  ev.preventDefault();
  const url = $('#docs-import-url').value.trim();
  const d = state.docs;
  if (!url || !d) return;
  clearError();
  const body = await api('POST', `/v1/skills/${enc(d.skill)}/import`, { url, tier: $('#docs-tier').value || 'references' });
  $('#docs-import-url').value = '';
  const names = ((body && body.documents) || []).map((x) => x.name);
  await followJob(body && body.job, `Imported ${url} as ${names.join(', ')} into ${d.skill}.`);
}

async function deleteSelected() {
  const skill = state.docs.skill;
  const names = [...state.docsSelected];
  if (!names.length) return;
  const ok = await confirmDialog(
    `Delete ${plural(names.length, 'document')} from ${skill}? The files are removed from the skill's folder and the skill is re-indexed once without them.`,
    'Delete');
  if (!ok) return;
  clearError();
  const body = await api('DELETE', documentsUrl(skill), { names });
  state.docsSelected.clear();
  if (names.includes($('#docs-chunks').dataset.name)) closeDocument();
  await followJob(body && body.job, `Deleted ${(body && body.deleted || names).join(', ')} from ${skill}.`);
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
  const select = $('#docs-preset-select');
  select.value = ['general', 'faq', 'legal', 'technical'].includes(doc.doc_type) ? doc.doc_type : 'auto';
  $('#docs-preset-note').textContent = doc.doc_type ? `Chunked as ${doc.doc_type}.` : '';
  $('#docs-preset').dataset.doc = doc.name;
  $('#docs-metadata-text').value = Object.entries(doc.metadata || {}).map(([k, v]) => `${k}=${v}`).join(', ');
  updatePresetControls();
  const chunks = (body && body.chunks) || [];
  const disabled = chunks.filter((c) => c.enabled === false).length;
  const counted = plural(chunks.length, 'chunk') + (disabled ? ` (${disabled} disabled)` : '');
  const facts = [counted, doc.format, doc.pages ? plural(doc.pages, 'page') : null, formatBytes(doc.size)];
  $('#docs-chunks-sub').textContent = facts.filter(Boolean).join(' · ');
  if (!chunks.length) list.append(el('div', { class: 'none', text: 'This document has no indexed chunks.' }));
  const writable = Boolean(state.docs.writable) && !docsBusy();
  for (const c of chunks) {
    const text = el('div', { class: 'chunk-text' });
    renderMarkdown(text, c.text);
    const marks = [c.enabled === false ? 'disabled' : null, c.edited ? 'edited' : null];
    const head = [`#${c.ordinal}`, c.heading, formatPages(c.pages), ...marks].filter((x) => x !== '' && x !== null && x !== undefined);
    const extras = [...(c.keywords || []), ...(c.questions || [])];
    const card = el('div', {
      class: `doc-chunk${c.enabled === false ? ' disabled' : ''}`,
      dataset: { testid: 'docs-chunk', ordinal: c.ordinal, id: c.chunk_id, enabled: String(c.enabled !== false) },
    }, el('div', { class: 'chunk-head', text: head.join(' · ') }), text,
    extras.length ? el('div', { class: 'chunk-extras', dataset: { testid: 'chunk-extras' }, text: `also found by: ${extras.join(' · ')}` }) : null);
    if (writable) card.append(chunkActions(c, doc, card));
    list.append(card);
  }
}

// -- A document's chunking preset: previewed, then chosen (kept with the chunk edits) ----------

function updatePresetControls() {
  const writable = Boolean(state.docs && state.docs.writable) && !docsBusy();
  $('#docs-preset-apply').disabled = !writable;
  $('#docs-metadata-save').disabled = !writable;
  $('#docs-preset-apply').title = writable ? 'Chunk the document this way from now on (its chunk edits are dropped)'
    : 'Needs `skillrag serve --allow-writes`, and no re-index running';
}

/** The chunks the document would get with the chosen preset, shown in place of its own. */
async function previewPreset() {
  clearError();
  const name = $('#docs-preset').dataset.doc;
  const preset = $('#docs-preset-select').value;
  const body = await api('GET', `${documentsUrl(state.docs.skill)}/${enc(name)}/chunks?preset=${enc(preset)}`);
  if ($('#docs-chunks').dataset.name !== name) return;
  const list = $('#docs-chunks-list');
  list.textContent = '';
  list.dataset.preview = body.preset;
  $('#docs-preset-note').textContent = `Preview: ${plural(body.chunks.length, 'chunk')} as ${body.preset}`
    + `${body.chosen ? ` (chosen now: ${body.chosen})` : ''}. Nothing is changed until you apply it.`;
  for (const c of body.chunks) {
    const text = el('div', { class: 'chunk-text' });
    renderMarkdown(text, c.text);
    const head = [`#${c.ordinal}`, c.heading, formatPages(c.pages), `${c.chars} chars`].filter(Boolean);
    list.append(el('div', { class: 'doc-chunk preview', dataset: { testid: 'docs-preview-chunk', ordinal: c.ordinal } },
      el('div', { class: 'chunk-head', text: head.join(' · ') }), text));
  }
}

async function saveMetadata() {
  clearError();
  const name = $('#docs-preset').dataset.doc;
  const metadata = parseMetadata($('#docs-metadata-text').value);
  const body = await api('PUT', `${documentsUrl(state.docs.skill)}/${enc(name)}/metadata`, { metadata });
  const saved = Object.entries(body.metadata || {}).map(([k, v]) => `${k}=${v}`).join(', ');
  $('#docs-metadata-text').value = saved;
  $('#docs-metadata-note').textContent = saved ? `Saved: ${saved}.` : 'Saved: no metadata.';
  await loadDocuments();
}

async function applyPreset() {
  clearError();
  const name = $('#docs-preset').dataset.doc;
  const preset = $('#docs-preset-select').value;
  const body = await api('PUT', `${documentsUrl(state.docs.skill)}/${enc(name)}/preset`, { preset });
  const dropped = body.dropped_edits ? ` ${plural(body.dropped_edits, 'chunk edit')} of it dropped (they named its old chunks).` : '';
  delete $('#docs-chunks-list').dataset.preview;
  await followJob(body.job, `${name}: chunked as ${preset} from now on.${dropped}`);
}

// -- Chunk edits: kept by the server beside the documents and applied at every re-index --------

const splitList = (text, commas) => String(text || '').split(commas ? /[\n,，、]/ : /\n/).map((x) => x.trim()).filter(Boolean);

function chunkActions(c, doc, card) {
  const toggle = el('button', {
    type: 'button', class: 'small secondary', dataset: { testid: 'chunk-toggle' },
    text: c.enabled === false ? 'Enable' : 'Disable',
    title: c.enabled === false ? 'Retrieve this chunk again' : 'Keep this chunk out of retrieval (it stays listed here)',
    onclick: guard(() => editChunk(c, doc, { enabled: c.enabled === false })),
  });
  const edit = el('button', {
    type: 'button', class: 'small secondary', dataset: { testid: 'chunk-edit' }, text: 'Edit',
    onclick: () => openChunkEditor(c, doc, card),
  });
  return el('div', { class: 'chunk-actions' }, c.enabled === false ? null : edit, toggle);
}

function openChunkEditor(c, doc, card) {
  if (card.querySelector('.chunk-editor')) return;
  const text = el('textarea', { class: 'chunk-edit-text', rows: 6, dataset: { testid: 'chunk-edit-text' }, 'aria-label': 'Chunk text' });
  text.value = c.text;
  const keywords = el('input', { type: 'text', dataset: { testid: 'chunk-edit-keywords' }, placeholder: 'keywords, comma-separated', 'aria-label': 'Keywords' });
  keywords.value = (c.keywords || []).join(', ');
  const questions = el('textarea', { rows: 2, dataset: { testid: 'chunk-edit-questions' }, placeholder: 'questions it answers, one per line', 'aria-label': 'Questions' });
  questions.value = (c.questions || []).join('\n');
  const editor = el('div', { class: 'chunk-editor', dataset: { testid: 'chunk-editor' } }, text, keywords, questions,
    el('div', { class: 'form-actions' },
      el('button', {
        type: 'button', class: 'small', dataset: { testid: 'chunk-edit-save' }, text: 'Save',
        onclick: guard(() => editChunk(c, doc, {
          text: text.value, keywords: splitList(keywords.value, true), questions: splitList(questions.value, false),
        })),
      }),
      el('button', { type: 'button', class: 'small secondary', text: 'Cancel', onclick: () => editor.remove() })),
    el('div', { class: 'hint', text: 'Kept beside the document and applied at every re-index, until the document itself changes.' }));
  card.append(editor);
  text.focus();
}

async function editChunk(c, doc, change) {
  clearError();
  const body = await api('PATCH', `/v1/skills/${enc(state.docs.skill)}/chunks/${c.chunk_id}`, change);
  const what = change.enabled === false ? 'Disabled' : change.enabled === true ? 'Enabled' : 'Edited';
  await followJob(body && body.job, `${what} chunk #${c.ordinal} of ${doc.name}.`);
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
    const query = new URLSearchParams({ tier: $('#docs-tier').value || 'references' });
    if (replace) query.set('replace', 'true');
    const res = await fetch(`${documentsUrl(d.skill)}?${query}`, {
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
  // A document chunked again (a chunk edit) is listed anew, with its chunks' new ids.
  const panel = $('#docs-chunks');
  const shown = !panel.hidden && state.docs && (state.docs.documents || []).find((d) => d.name === panel.dataset.name);
  if (shown) await openDocument(shown);
  await loadSkills();
  await loadHealth();
  if (job && job.state === 'failed') showError(`re-index #${job.id} failed: ${job.message || 'no message'}`);
}

/** Wires the view's controls (once, at start). */
export function init() {
  $('#docs-skill').addEventListener('change', () => {
    localStorage.setItem(DOCS_SKILL_KEY, $('#docs-skill').value);
    closeDocument();
    hideConflict();
    guard(loadDocuments)();
  });
  $('#docs-refresh').addEventListener('click', guard(loadDocuments));
  $('#docs-filter').addEventListener('input', () => { state.docsView.filter = $('#docs-filter').value; state.docsView.page = 0; if (state.docs) renderDocuments(); });
  for (const th of document.querySelectorAll('#docs-table th[data-sort]')) {
    th.addEventListener('click', () => {
      const view = state.docsView;
      view.dir = view.sort === th.dataset.sort ? -view.dir : 1;
      view.sort = th.dataset.sort;
      if (state.docs) renderDocuments();
    });
  }
  $('#docs-prev').addEventListener('click', () => { state.docsView.page -= 1; renderDocuments(); });
  $('#docs-next').addEventListener('click', () => { state.docsView.page += 1; renderDocuments(); });
  $('#docs-select-all').addEventListener('change', (ev) => {
    for (const box of document.querySelectorAll('#docs-table .doc-select')) {
      box.checked = ev.target.checked;
      if (box.checked) state.docsSelected.add(box.dataset.name); else state.docsSelected.delete(box.dataset.name);
    }
    updateDocsControls();
  });
  $('#docs-delete-selected').addEventListener('click', guard(deleteSelected));
  $('#docs-import').addEventListener('submit', guard(importUrl));
  $('#docs-chunks-close').addEventListener('click', closeDocument);
  $('#docs-preset-preview').addEventListener('click', guard(previewPreset));
  $('#docs-preset-apply').addEventListener('click', guard(applyPreset));
  $('#docs-metadata-save').addEventListener('click', guard(saveMetadata));
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
}

/** The tab was opened. */
export function show() {
  guard(showDocuments)();
}
