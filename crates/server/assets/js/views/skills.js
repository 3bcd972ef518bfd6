// The Skills view: every skill with its index state; a new skill from a form (its SKILL.md in
// parts), a skill's SKILL.md edited as text with lint's messages shown by line before it is
// saved, and a skill deleted (to the project's trash). Writes need `serve --allow-writes`.
import { $, dash, el } from '../dom.js';
import { plural } from '../format.js';
import { api, ApiError, apiText, enc, getText } from '../api.js';
import { clearError, confirmDialog, guard, showError } from '../ui.js';
import { state } from '../state.js';
import { loadHealth, loadModels, loadSkills } from '../skills.js';
import { fetchJob, renderJobInto } from '../jobs.js';

const POLL_MS = 1000;
const skillUrl = (skill) => `/v1/skills/${enc(skill)}`;

async function showSkills() {
  await loadSkills();
  render();
}

/** The tab was opened. */
export function show() {
  guard(showSkills)();
}

function writable() {
  return Boolean(state.skillsWritable);
}

function busy() {
  return $('#skills-job').dataset.state === 'running';
}

function updateControls() {
  const enabled = writable() && !busy();
  $('#skills-readonly').classList.toggle('hidden', writable());
  $('#skill-new').disabled = !enabled;
  $('#skill-form-save').disabled = !enabled;
  $('#skill-editor-save').disabled = !enabled;
  $('#skill-editor-text').readOnly = !writable();
  for (const b of document.querySelectorAll('#skill-list .skill-delete, #skill-list .skill-rename, #skill-list .skill-toggle')) {
    b.disabled = !enabled || (b.classList.contains('skill-rename') && b.closest('tr').classList.contains('off'));
  }
}

function render() {
  const skills = state.allSkills || [];
  const chunks = skills.reduce((n, s) => n + (s.chunks || 0), 0);
  $('#skills-summary').textContent = `${plural(skills.length, 'skill')} · ${plural(chunks, 'chunk')}`;
  const tbody = $('#skill-list tbody');
  tbody.textContent = '';
  if (!skills.length) {
    tbody.append(el('tr', {}, el('td', { colspan: 6, class: 'none', text: 'No skills yet. Create one with “New skill”.' })));
  }
  for (const s of skills) {
    const on = s.enabled !== false;
    const index = s.index && s.index.state ? s.index.state : 'missing';
    tbody.append(el('tr', { class: on ? '' : 'off', dataset: { testid: 'skill-list-row', skill: s.skill, enabled: String(on) } },
      el('td', { class: 'skill' }, el('button', {
        type: 'button', class: 'linkish', title: `Edit the SKILL.md of ${s.skill}`, dataset: { testid: 'skill-edit' },
        text: s.skill, onclick: guard(() => openEditor(s.skill)),
      })),
      el('td', { class: 'desc', title: s.description || '', text: s.description || '' }),
      el('td', { class: 'num' }, s.files ?? dash()),
      el('td', { class: 'num' }, s.chunks ?? dash()),
      el('td', {}, on ? el('span', { class: `state ${index}`, text: index })
        : el('span', { class: 'state disabled', title: `not routed to or answered from; its index (${index}) is kept`, text: 'disabled' })),
      el('td', { class: 'skill-actions' }, el('button', {
        type: 'button', class: 'small secondary skill-toggle', dataset: { testid: 'skill-toggle' },
        title: on ? 'Stop routing questions to this skill (its index is kept)' : 'Answer from this skill again',
        text: on ? 'Disable' : 'Enable', onclick: guard(() => toggleSkill(s.skill, !on)),
      }), el('button', {
        type: 'button', class: 'small secondary skill-rename', dataset: { testid: 'skill-rename' },
        text: 'Rename', onclick: (ev) => openRename(s.skill, ev.target.closest('tr')),
      }), el('button', {
        type: 'button', class: 'small danger skill-delete', dataset: { testid: 'skill-delete' },
        text: 'Delete', onclick: guard(() => deleteSkill(s.skill)),
      }))));
  }
  updateControls();
}

// -- The new-skill form ------------------------------------------------------------------

function formErrors(err) {
  for (const box of document.querySelectorAll('#skill-form .field-error')) {
    box.textContent = err && err.field === box.dataset.field ? err.message : '';
  }
  renderDiagnostics($('#skill-form-diagnostics'), err ? err.diagnostics : []);
}

/** One keyword per line or comma; the server refuses a keyword it would read as several. */
const lines = (text, commas) => String(text || '').split(commas ? /[\n,，、]/ : /\n/).map((x) => x.trim()).filter(Boolean);

function openForm() {
  closeEditor();
  $('#skill-form').reset();
  formErrors(null);
  $('#skill-form').hidden = false;
  $('#skill-form-name').focus();
}

function closeForm() {
  $('#skill-form').hidden = true;
}

async function createSkill(ev) {
  ev.preventDefault();
  clearError();
  formErrors(null);
  const body = {
    name: $('#skill-form-name').value.trim(),
    description: $('#skill-form-description').value.trim(),
    triggers: lines($('#skill-form-triggers').value, true),
    boundary: $('#skill-form-boundary').value,
    examples: lines($('#skill-form-examples').value, false),
    instructions: $('#skill-form-instructions').value,
  };
  let created;
  try {
    created = await api('POST', '/v1/skills', body);
  } catch (err) {
    // Refused by field or by lint: said beside the form, which keeps what was typed.
    if (err instanceof ApiError && err.status === 422 && (err.field || err.diagnostics.length)) {
      formErrors(err);
      return;
    }
    throw err;
  }
  closeForm();
  await followJob(created.job, `Created ${created.skill} (${created.path}).`, created.diagnostics, created.skill);
}

// -- The SKILL.md editor ---------------------------------------------------------------------

function renderDiagnostics(list, diagnostics) {
  list.textContent = '';
  for (const d of diagnostics || []) {
    const sev = String(d.severity || 'warning').toLowerCase();
    list.append(el('li', { class: `diag ${sev}`, dataset: { testid: 'lint-message', line: d.line ?? '' } },
      el('code', { text: d.line ? `line ${d.line}` : 'SKILL.md' }), ' ', el('span', { class: `sev ${sev}`, text: sev }),
      ' ', d.message));
  }
}

async function openEditor(skill) {
  closeForm();
  const text = await getText(`${skillUrl(skill)}/skill-md`);
  const editor = $('#skill-editor');
  editor.dataset.skill = skill;
  editor.dataset.saved = text;
  $('#skill-editor-title').textContent = skill;
  $('#skill-editor-text').value = text;
  renderDiagnostics($('#skill-editor-diagnostics'), []);
  editor.hidden = false;
  updateControls();
}

function closeEditor() {
  $('#skill-editor').hidden = true;
  $('#skill-editor').dataset.skill = '';
}

async function saveSkillFile() {
  const editor = $('#skill-editor');
  const skill = editor.dataset.skill;
  if (!skill) return;
  clearError();
  const text = $('#skill-editor-text').value;
  let saved;
  try {
    saved = await apiText('PUT', `${skillUrl(skill)}/skill-md`, text);
  } catch (err) {
    if (err instanceof ApiError && err.status === 422) {
      renderDiagnostics($('#skill-editor-diagnostics'), err.diagnostics.length ? err.diagnostics
        : [{ severity: 'error', message: err.message }]);
      return;
    }
    throw err;
  }
  editor.dataset.saved = text;
  renderDiagnostics($('#skill-editor-diagnostics'), saved.diagnostics);
  await followJob(saved.job, `Saved ${saved.path}.`, null, null);
}

/** An inline field in the skill's row for its new name. */
function openRename(skill, row) {
  const cell = row.querySelector('td.skill');
  if (cell.querySelector('input')) return;
  const input = el('input', { type: 'text', dataset: { testid: 'skill-rename-name' }, 'aria-label': `New name of ${skill}` });
  input.value = skill;
  const restore = () => { guard(showSkills)(); };
  cell.textContent = '';
  cell.append(input, el('button', {
    type: 'button', class: 'small', dataset: { testid: 'skill-rename-save' }, text: 'Save',
    onclick: guard(() => renameSkill(skill, input.value.trim())),
  }), el('button', { type: 'button', class: 'small secondary', text: 'Cancel', onclick: restore }));
  input.focus();
  input.select();
}

async function renameSkill(skill, name) {
  if (!name || name === skill) return;
  clearError();
  const body = await api('PATCH', skillUrl(skill), { name });
  if ($('#skill-editor').dataset.skill === skill) closeEditor();
  await followJob(body.job, `Renamed ${skill} to ${body.skill} (${body.path}).`, body.diagnostics, body.skill);
}

async function toggleSkill(skill, enabled) {
  clearError();
  const body = await api('PATCH', skillUrl(skill), { enabled });
  const note = enabled ? `Enabled ${skill}: it answers again.` : `Disabled ${skill}: it is not routed to; its index is kept.`;
  if (body.job) {
    await followJob(body.job, note, null, null);
    return;
  }
  renderJobInto($('#skills-job'), null);
  await refreshAll();
  $('#skills-job').hidden = false;
  $('#skills-job').append(el('div', { class: 'job-message', dataset: { testid: 'skill-toggled' }, text: note }));
}

async function deleteSkill(skill) {
  const ok = await confirmDialog(
    `Delete the skill ${skill}? Its folder is moved to the project's trash (.skillrag/trash/) and its index dropped.`,
    'Delete');
  if (!ok) return;
  clearError();
  const body = await api('DELETE', skillUrl(skill));
  if ($('#skill-editor').dataset.skill === skill) closeEditor();
  renderJobInto($('#skills-job'), null);
  await refreshAll();
  const note = el('div', { class: 'job-message', dataset: { testid: 'skill-deleted' },
    text: `Deleted ${body.skill}: its folder is in ${body.trash}.` });
  $('#skills-job').hidden = false;
  $('#skills-job').append(note);
}

// -- The re-index a write started --------------------------------------------------------------

async function followJob(job, note, diagnostics, open) {
  const box = $('#skills-job');
  renderJobInto(box, job, note);
  box.dataset.note = note || '';
  if (diagnostics && diagnostics.length) {
    const list = el('ul', { class: 'diagnostics', dataset: { testid: 'skill-warnings' } });
    renderDiagnostics(list, diagnostics);
    box.append(list);
  }
  updateControls();
  await poll(open);
}

async function poll(open) {
  if (state.skillsPolling) clearTimeout(state.skillsPolling);
  state.skillsPolling = null;
  const box = $('#skills-job');
  const job = await fetchJob(() => poll(open), (timer) => { state.skillsPolling = timer; });
  if (job === undefined) return;
  if (job && job.state === 'running') {
    state.skillsPolling = setTimeout(guard(() => poll(open)), POLL_MS);
    return;
  }
  const warnings = box.querySelector('[data-testid="skill-warnings"]');
  renderJobInto(box, job, box.dataset.note);
  if (warnings) box.append(warnings);
  await refreshAll();
  if (open) await openEditor(open);
  if (job && job.state === 'failed') showError(`re-index #${job.id} failed: ${job.message || 'no message'}`);
}

async function refreshAll() {
  await loadSkills();
  await loadModels();
  await loadHealth();
  render();
}

/** Wires the view's controls (once, at start). */
export function init() {
  $('#skill-new').addEventListener('click', openForm);
  $('#skills-refresh').addEventListener('click', guard(showSkills));
  $('#skill-form').addEventListener('submit', guard(createSkill));
  $('#skill-form-cancel').addEventListener('click', closeForm);
  $('#skill-editor-close').addEventListener('click', closeEditor);
  $('#skill-editor-save').addEventListener('click', guard(saveSkillFile));
  $('#skill-editor-revert').addEventListener('click', () => {
    $('#skill-editor-text').value = $('#skill-editor').dataset.saved || '';
    renderDiagnostics($('#skill-editor-diagnostics'), []);
  });
}
