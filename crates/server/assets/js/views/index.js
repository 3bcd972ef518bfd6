// The Index view: each skill's index, and re-indexing with its report.
import { $, el } from '../dom.js';
import { formatBytes } from '../format.js';
import { api, ApiError } from '../api.js';
import { clearError, describe, guard, showError } from '../ui.js';
import { state } from '../state.js';
import { loadHealth, loadSkills } from '../skills.js';
import { fetchJob, renderJobInto } from '../jobs.js';

const POLL_MS = 500;

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
  renderJobInto($('#index-job'), job);
  const running = Boolean(job) && job.state === 'running';
  $('#reindex-all').disabled = running;
  for (const b of document.querySelectorAll('.reindex-one')) b.disabled = running;
}

function stopPolling() {
  if (state.polling) clearTimeout(state.polling);
  state.polling = null;
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

/** Wires the view's controls (once, at start). */
export function init() {
  $('#reindex-all').addEventListener('click', guard(() => startIndex(state.skills.map((s) => s.skill))));
  $('#index-refresh').addEventListener('click', guard(refreshIndexView));
}

/** The tab was opened. */
export function show() {
  guard(refreshIndexView)();
}
