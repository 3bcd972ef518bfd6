// The Gaps view: what the knowledge base did not answer well, by cause.
import { $, dash, el } from '../dom.js';
import { formatTime, plural } from '../format.js';
import { api, enc } from '../api.js';
import { guard } from '../ui.js';
import { state } from '../state.js';
import { runSearch } from './search.js';

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

/** Wires the view's controls (once, at start). */
export function init() {
  $('#gaps-skill').addEventListener('change', guard(loadGaps));
  $('#gaps-refresh').addEventListener('click', guard(loadGaps));
}

/** The tab was opened. */
export function show() {
  guard(loadGaps)();
}
