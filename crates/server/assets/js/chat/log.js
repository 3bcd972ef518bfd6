// Chat: the questions and answers shown, an answer rendered with its linked citations.
import { $, el } from '../dom.js';
import { citedNote } from '../format.js';
import { mdAnswer, proseTextNodes, renderMarkdown } from '../markdown.js';
import { guard } from '../ui.js';
import { openCitation } from './citations.js';
import { answerActions } from './actions.js';

export function appendMessage(role) {
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

export function scrollChat() {
  const log = $('#chat-log');
  log.scrollTop = log.scrollHeight;
}

function citationLink(cit) {
  const link = el('a', {
    href: '#', class: 'cite', dataset: { testid: 'citation-link', n: cit.n },
    title: citedNote(cit),
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
export function renderAnswer(target, text, citations) {
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

/** The route under an answer, from the Answer JSON (`route`, `timings_ms`). */
function renderRoute(meta, extras) {
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
  meta.append('route: ', ...parts);
  meta.dataset.testid = 'route';
}

function renderRefusal(msg, refusal, text) {
  msg.bubble.replaceWith(el('div', { class: 'refusal', dataset: { testid: 'refusal', kind: refusal.kind || '' } },
    el('div', { class: 'kind', text: `refused · ${refusal.kind || 'unknown'}` }),
    el('div', { class: 'refusal-text', text: text || refusal.message || '' })));
}

/** An Answer's citation with the passage it cites (its context piece's text). */
function withText(answer, cit) {
  if (typeof cit.text === 'string' && cit.text) return cit;
  const pieces = (answer.context && answer.context.pieces) || [];
  const piece = pieces.find((p) => Number(p.n) === Number(cit.context_n));
  return { ...cit, text: piece ? piece.text : '' };
}

/** The answer as plain text with its sources under it, as the CLI prints it. */
function plainAnswer(text, citations) {
  const notes = citations.map((c) => `[${c.n}] ${citedNote(c)}`);
  return notes.length ? `${text}\n\n${notes.join('\n')}` : text;
}

export function appendQuestion(question) {
  const msg = appendMessage('user');
  msg.bubble.textContent = question;
  msg.meta.remove();
  return msg;
}

/** Renders a finished answer (streamed now or loaded with its conversation) into `msg`. */
export function finishAnswer(msg, question, answer, conversationId) {
  msg.node.classList.remove('streaming');
  const citations = (answer.citations || []).map((c) => withText(answer, c));
  const refusal = answer.refusal;
  const text = answer.answer || (refusal && refusal.message) || '';
  if (refusal) renderRefusal(msg, refusal, text);
  else renderAnswer(msg.bubble, text, citations);
  renderRoute(msg.meta, answer);
  msg.node.dataset.state = 'done';
  msg.node.dataset.refusal = refusal ? refusal.kind || 'unknown' : '';
  if (answer.answer_id) msg.node.dataset.answerId = answer.answer_id;
  msg.node.append(answerActions(question, answer, plainAnswer(text, citations), conversationId));
}
