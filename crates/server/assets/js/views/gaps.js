// The Gaps view: what the knowledge base did not answer well, by cause, and each gap closed:
// drafted into a new entry (or a routing example), edited and approved into the skill, or
// marked resolved; and the answers users liked, each kept as an entry the same way. Writes need
// `serve --allow-writes`.
import { $, dash, el } from '../dom.js';
import { formatTime, plural } from '../format.js';
import { api, ApiError, enc } from '../api.js';
import { clearError, guard, showError } from '../ui.js';
import { fetchJob } from '../jobs.js';
import { loadSkills } from '../skills.js';
import { state } from '../state.js';
import { runSearch } from './search.js';

const CAUSES = [
  ['content', 'Not in the knowledge', 'Refused: no document answers these. Add knowledge that does.'],
  ['retrieval', 'Answered badly', 'Answered but rated down: the right passages were not found or not used. Try them in Retrieval testing.'],
  ['routing', 'Wrong skill', 'Rated down naming the right skill, or saying no skill covers it: the router got it wrong (skillrag tune learns from these).'],
];

async function loadGaps() {
  if (!state.skills.length) await loadSkills();
  const skill = $('#gaps-skill').value;
  const body = await api('GET', `/v1/gaps?limit=500${skill ? `&skill=${enc(skill)}` : ''}`);
  renderGaps((body && body.gaps) || []);
  renderLiked((body && body.liked) || []);
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
          el('td', { class: 'gap-actions' }, el('button', {
            type: 'button', class: 'small secondary', title: 'Search this question in Retrieval testing',
            dataset: { testid: 'gap-search' }, text: 'Search', onclick: () => searchGap(g),
          }), state.skillsWritable ? [
            el('button', {
              type: 'button', class: 'small', dataset: { testid: 'gap-draft' },
              title: cause === 'routing' ? `Draft a routing example for ${g.skill}` : 'Draft a knowledge entry answering it',
              text: 'Draft', onclick: guard((ev) => draftGap(g, ev.target.closest('tr'))),
            }),
            el('button', {
              type: 'button', class: 'small secondary', dataset: { testid: 'gap-resolve' }, text: 'Resolve',
              title: 'Mark it resolved: it leaves the list until it is asked again',
              onclick: guard(() => resolveGap(g)),
            }),
          ] : null)));
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

/** The answers rated 👍: each may be kept as an entry under the question as users asked it. */
function renderLiked(liked) {
  const section = el('section', { class: 'gap-group', dataset: { testid: 'gap-group', cause: 'liked' } },
    el('h2', {}, 'Answers users liked', ' ', el('span', { class: 'chip', text: plural(liked.length, 'answer') })),
    el('p', { class: 'hint', text: 'Rated helpful (thumbs up). Keep one as a knowledge entry: it is then found by the question as users asked it.' }));
  if (!liked.length) {
    section.append(el('div', { class: 'gap-none', text: 'Nothing here.' }));
    $('#gaps-groups').append(section);
    return;
  }
  const tbody = el('tbody');
  for (const l of liked) {
    tbody.append(el('tr', { dataset: { testid: 'gap-row', cause: 'liked', skill: l.skill } },
      el('td', { class: 'skill', text: l.skill }),
      el('td', { class: 'question' }, el('div', { text: l.query }),
        el('div', { class: 'gap-comment', title: l.answer, text: l.answer.length > 160 ? `${l.answer.slice(0, 160)}…` : l.answer })),
      el('td', { class: 'num', text: String(l.count ?? '') }),
      el('td', { class: 'when' }, formatTime(l.last_seen) || dash()),
      el('td', { class: 'gap-actions' }, state.skillsWritable ? [
        el('button', {
          type: 'button', class: 'small', dataset: { testid: 'gap-draft' }, title: 'Draft an entry keeping this answer',
          text: 'Draft', onclick: guard((ev) => draftGap(l, ev.target.closest('tr'))),
        }),
        el('button', {
          type: 'button', class: 'small secondary', dataset: { testid: 'gap-resolve' }, text: 'Resolve',
          title: 'Take it off the list until it is rated 👍 again', onclick: guard(() => resolveGap(l)),
        }),
      ] : dash())));
  }
  section.append(el('div', { class: 'table-wrap' }, el('table', { class: 'data' },
    el('thead', {}, el('tr', {},
      el('th', { text: 'skill' }), el('th', { text: 'question and answer' }), el('th', { class: 'num', text: 'count' }),
      el('th', { text: 'last rated' }), el('th'))),
    tbody)));
  $('#gaps-groups').append(section);
}

/** What the draft's answer is, and what the owner should do with it. */
function draftOrigin(draft) {
  const from = draft.sources && draft.sources.length ? ` (${draft.sources.join(', ')})` : '';
  switch (draft.drafted_by) {
    case 'llm': return `The answer below was written by the LLM from the passages it cites${from}, each sentence checked against them: check and edit it.`;
    case 'rated_answer': return `The answer below is the one users rated 👍${from}: edit it if needed.`;
    case 'passage': return `The answer below is the best passage it has now${from}: rewrite it.`;
    default: return 'Write the answer.';
  }
}

// -- Closing a gap -----------------------------------------------------------------------------

/** Drafts an entry from the gap and opens it, editable, under its row. */
async function draftGap(g, row) {
  clearError();
  const open = row.nextElementSibling;
  if (open && open.dataset.testid === 'draft-row') return;
  const body = await api('POST', `/v1/gaps/${enc(g.id)}/draft`);
  const draft = body.draft;
  const example = draft.kind === 'example';
  const question = el('input', { type: 'text', dataset: { testid: 'draft-question' }, 'aria-label': 'Question' });
  question.value = draft.question;
  const answer = el('textarea', { rows: 5, dataset: { testid: 'draft-answer' }, 'aria-label': 'Answer' });
  answer.value = draft.answer || '';
  const skill = el('select', { dataset: { testid: 'draft-skill' }, 'aria-label': 'Skill to write it into' });
  for (const s of state.skills) skill.append(el('option', { value: s.skill, text: s.skill }));
  if (draft.skill) skill.value = draft.skill;
  const error = el('div', { class: 'field-error', dataset: { testid: 'draft-error' } });
  const what = example
    ? `A routing example for ${draft.skill}: it joins the skill's ## Examples, so questions like it go there.`
    : `A new entry in ${draft.skill || 'a skill'}'s knowledge (knowledge/answers-from-gaps.md). ${draftOrigin(draft)}`;
  const cell = el('td', { colspan: 6 }, el('div', { class: 'draft', dataset: { testid: 'draft', id: draft.id } },
    el('div', { class: 'hint', text: what }),
    el('label', {}, 'Skill', skill),
    el('label', {}, 'Question', question),
    example ? null : el('label', {}, 'Answer', answer),
    error,
    el('div', { class: 'form-actions' },
      el('button', {
        type: 'button', dataset: { testid: 'draft-approve' }, text: example ? 'Add the example' : 'Approve and index',
        onclick: guard(() => approveDraft(draft, { skill: skill.value, question: question.value, answer: example ? undefined : answer.value }, error)),
      }),
      el('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: () => draftRow.remove() }))));
  const draftRow = el('tr', { class: 'draft-row', dataset: { testid: 'draft-row' } }, cell);
  row.after(draftRow);
  (example ? question : answer).focus();
}

async function approveDraft(draft, changes, error) {
  clearError();
  error.textContent = '';
  let approved;
  try {
    approved = await api('POST', `/v1/drafts/${enc(draft.id)}/approve`, changes);
  } catch (err) {
    if (err instanceof ApiError && err.status === 422) {
      error.textContent = err.message;
      return;
    }
    throw err;
  }
  const status = $('#gaps-status');
  status.hidden = false;
  status.dataset.state = 'running';
  status.textContent = `Written to ${approved.path}; indexing ${approved.skill}…`;
  await waitForJob(approved.job && approved.job.id);
  status.dataset.state = 'done';
  status.textContent = `Written to ${approved.path} and indexed: ask the question again to get it.`;
  await loadSkills();
  await loadGaps();
}

/** Waits for the re-index `id` to end. */
async function waitForJob(id) {
  for (;;) {
    const job = await fetchJob(() => {}, () => {});
    if (job && job.id === id && job.state !== 'running') {
      if (job.state === 'failed') showError(`re-index #${job.id} failed: ${job.message || 'no message'}`);
      return;
    }
    await new Promise((resolve) => { setTimeout(resolve, 500); });
  }
}

async function resolveGap(g) {
  clearError();
  await api('POST', `/v1/gaps/${enc(g.id)}/resolve`);
  await loadGaps();
}

/** Wires the view's controls (once, at start). */
export function init() {
  $('#gaps-skill').addEventListener('change', guard(loadGaps));
  $('#gaps-refresh').addEventListener('click', guard(loadGaps));
}

/** The tab was opened. */
export function show() {
  guard(loadGaps)();
}
