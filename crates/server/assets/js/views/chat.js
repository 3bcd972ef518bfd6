// The Chat view: ask, stream the answer, stop; conversations, citations and feedback are in
// js/chat/.
import { $, el } from '../dom.js';
import { clearError, describe, guard } from '../ui.js';
import { state } from '../state.js';
import { updateSkillHint } from '../skills.js';
import { streamAsk } from '../chat/stream.js';
import { closePanel } from '../chat/citations.js';
import { appendMessage, appendQuestion, finishAnswer, renderAnswer, scrollChat } from '../chat/log.js';
import {
  ensureConversation, loadConversations, newConversation, resumeConversation,
} from '../chat/conversations.js';

function setStreaming(on) {
  $('#send').hidden = on;
  $('#stop').hidden = !on;
  if (on) $('#stop').focus();
}

async function sendMessage() {
  if (state.streaming) return;
  const input = $('#chat-input');
  const question = input.value.trim();
  if (!question) return;
  clearError();
  input.value = '';
  const skill = $('#skill-picker').value || 'auto';

  appendQuestion(question);
  const msg = appendMessage('assistant');
  msg.node.classList.add('streaming');
  let text = '';
  const controller = new AbortController();
  state.streaming = controller;
  setStreaming(true);

  try {
    const conversationId = await ensureConversation(controller.signal);
    const req = { query: question, stream: true, conversation_id: conversationId };
    if (skill !== 'auto') req.skill = skill;
    const answer = await streamAsk(req, controller.signal, (piece) => {
      text += piece;
      // The whole text again: a table or list is only Markdown once its lines are in.
      renderAnswer(msg.bubble, text, []);
      scrollChat();
    });
    finishAnswer(msg, question, answer, conversationId);
    // The list shows the new turn count (and the title the first question gave).
    guard(loadConversations)();
  } catch (err) {
    msg.node.classList.remove('streaming');
    const stopped = err && err.name === 'AbortError';
    msg.node.classList.add(stopped ? 'stopped' : 'failed');
    msg.node.dataset.state = stopped ? 'stopped' : 'error';
    if (stopped) {
      renderAnswer(msg.bubble, text, []);
      msg.bubble.append(el('div', { class: 'stopped-note', text: '(stopped)' }));
    } else {
      msg.bubble.textContent = text || describe(err);
    }
    if (!stopped && !input.value) input.value = question; // to retry
    throw err;
  } finally {
    state.streaming = null;
    setStreaming(false);
    scrollChat();
    input.focus();
  }
}

function stopAnswer() {
  if (state.streaming) state.streaming.abort();
}

/** Wires the view's controls (once, at start). */
export function init() {
  $('#chat-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(sendMessage)();
  });
  $('#chat-input').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
      ev.preventDefault();
      guard(sendMessage)();
    }
  });
  $('#chat-clear').addEventListener('click', newConversation);
  $('#stop').addEventListener('click', stopAnswer);
  $('#skill-picker').addEventListener('change', updateSkillHint);
  $('#chunk-close').addEventListener('click', closePanel);
  document.addEventListener('keydown', (ev) => {
    // Escape closes the picture dialog first (the browser does), the panel the next time.
    if (ev.key === 'Escape' && !$('#chunk-panel').hidden && !$('#picture-view').open && !$('#confirm-view').open) closePanel();
  });
  const pictureView = $('#picture-view');
  $('#picture-close').addEventListener('click', () => pictureView.close());
  // A click on the backdrop (the dialog itself, outside its content) closes it too.
  pictureView.addEventListener('click', (ev) => { if (ev.target === pictureView) pictureView.close(); });
}

/** The tab was opened. */
export function show() {
  $('#chat-input').focus();
}

/** The conversations, and the one that was open before a reload. */
export async function load() {
  await loadConversations();
  await resumeConversation();
}
