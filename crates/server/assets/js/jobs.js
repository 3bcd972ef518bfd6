// A re-index job and its report, shown by the Index and the Documents views.
import { dash, el } from './dom.js';
import { plural } from './format.js';
import { api, ApiError } from './api.js';
import { guard } from './ui.js';

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
export function renderJobInto(box, job, note) {
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

/**
 * The running or last re-index job (null when there is none). Rate-limited or busy: `again`
 * is scheduled after the delay the server asks for, its timer handed to `setTimer`, and the
 * result is undefined.
 */
export async function fetchJob(again, setTimer) {
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
