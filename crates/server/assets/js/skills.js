// Skills, models and health: the lists the skill pickers of every view are filled from.
import { $, el } from './dom.js';
import { api, AuthError, headers } from './api.js';
import { DOCS_SKILL_KEY, state } from './state.js';

export async function loadHealth() {
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

export async function loadSkills() {
  const body = await api('GET', '/v1/skills');
  // Every view picks among the skills that answer; the Skills tab lists the disabled ones too.
  state.allSkills = Array.isArray(body) ? body : body.skills || [];
  state.skills = state.allSkills.filter((s) => s.enabled !== false);
  state.skillsWritable = Boolean(body && body.writable);
  fillSkillSelect($('#search-skill'), 'all skills');
  const docs = $('#docs-skill');
  fillSkillSelect(docs, null, docs.value || localStorage.getItem(DOCS_SKILL_KEY) || '');
  fillSkillSelect($('#gaps-skill'), 'all skills');
  return state.skills;
}

export async function loadModels() {
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

export function updateSkillHint() {
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
