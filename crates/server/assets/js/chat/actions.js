// Chat: what the user can do with an answer: copy it, rate it (👍, 👎 with a skill correction).
import { el } from '../dom.js';
import { api } from '../api.js';
import { guard } from '../ui.js';
import { state } from '../state.js';

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
export function answerActions(question, answer, copyable, conversationId) {
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
