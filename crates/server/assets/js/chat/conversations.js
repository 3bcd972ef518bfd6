// Chat: conversations, stored by the server; the one shown is remembered across reloads.
import { $, el } from '../dom.js';
import { ago, plural } from '../format.js';
import { api, ApiError, enc } from '../api.js';
import { clearError, confirmDialog, guard } from '../ui.js';
import { CONVERSATION_KEY, state } from '../state.js';
import { closePanel } from './citations.js';
import { appendMessage, appendQuestion, finishAnswer, scrollChat } from './log.js';

function setConversation(conv) {
  state.conversation = conv ? { id: conv.id, title: conv.title || '' } : null;
  if (conv) localStorage.setItem(CONVERSATION_KEY, conv.id);
  else localStorage.removeItem(CONVERSATION_KEY);
  const title = $('#conv-title');
  title.textContent = conv ? conv.title || 'Untitled conversation' : 'New conversation';
  title.dataset.id = conv ? conv.id : '';
  for (const item of document.querySelectorAll('.conv-item')) {
    const active = Boolean(conv) && item.dataset.id === conv.id;
    item.classList.toggle('active', active);
    const open = item.querySelector('.conv-open');
    if (open) open.setAttribute('aria-current', String(active));
  }
}

/** The conversation of the next question: created on the first one. */
export async function ensureConversation(signal) {
  if (state.conversation) return state.conversation.id;
  const body = await api('POST', '/v1/conversations', {}, { signal });
  const conv = body && body.conversation;
  if (!conv || !conv.id) throw new Error('the server did not create a conversation');
  setConversation(conv);
  return conv.id;
}

function clearChatLog(message) {
  const log = $('#chat-log');
  log.textContent = '';
  if (message) log.append(el('div', { class: 'empty', id: 'chat-empty', text: message }));
}

export function newConversation() {
  if (state.streaming) state.streaming.abort();
  setConversation(null);
  clearChatLog('New conversation. Ask a question.');
  closePanel();
  clearError();
  renderConversations();
  $('#chat-input').focus();
}

export async function loadConversations() {
  const body = await api('GET', '/v1/conversations');
  state.conversations = (body && body.conversations) || [];
  // The server titles a conversation after its first question.
  const current = state.conversation && state.conversations.find((c) => c.id === state.conversation.id);
  if (current && (current.title || '') !== state.conversation.title) setConversation(current);
  renderConversations();
}

function renderConversations() {
  const list = $('#conv-list');
  list.textContent = '';
  // A conversation whose first question never got an answer (stopped, failed) has nothing to
  // resume; it is listed only while it is the open one.
  const shown = state.conversations.filter((c) => c.turns > 0 || (state.conversation && state.conversation.id === c.id));
  if (!shown.length) {
    list.append(el('li', { class: 'conv-empty', text: 'No conversations yet.' }));
    return;
  }
  for (const c of shown) list.append(conversationItem(c));
}

function conversationItem(c) {
  const active = Boolean(state.conversation) && state.conversation.id === c.id;
  const title = c.title || 'Untitled conversation';
  const turns = typeof c.turns === 'number' ? c.turns : (c.turns || []).length;
  const item = el('li', { class: `conv-item${active ? ' active' : ''}`, dataset: { testid: 'conversation-item', id: c.id } });
  const open = el('button', {
    type: 'button', class: 'conv-open', title, 'aria-current': String(active),
    dataset: { testid: 'conversation-open' }, onclick: guard(() => openConversation(c.id)),
  }, el('span', { class: 'conv-name', dataset: { testid: 'conversation-name' }, text: title }),
  el('span', { class: 'conv-meta', text: `${plural(turns, 'turn')} · ${ago(c.updated || c.created)}` }));
  const rename = el('button', {
    type: 'button', class: 'icon conv-action', title: 'Rename', 'aria-label': `Rename the conversation “${title}”`,
    dataset: { testid: 'conversation-rename' }, text: '✎', onclick: () => startRename(item, c),
  });
  const remove = el('button', {
    type: 'button', class: 'icon conv-action', title: 'Delete', 'aria-label': `Delete the conversation “${title}”`,
    dataset: { testid: 'conversation-delete' }, text: '×', onclick: guard(() => deleteConversation(c)),
  });
  item.append(open, rename, remove);
  return item;
}

/** Inline rename: Enter (or leaving the field) saves, Escape cancels. */
function startRename(item, c) {
  const input = el('input', {
    type: 'text', class: 'conv-rename', value: c.title || '', maxlength: 200,
    'aria-label': 'Conversation title', dataset: { testid: 'conversation-title-input' },
  });
  let finished = false;
  const finish = guard(async (save) => {
    if (finished) return;
    finished = true;
    try {
      const title = input.value.trim();
      if (!save || !title || title === c.title) return;
      const body = await api('PATCH', `/v1/conversations/${enc(c.id)}`, { title });
      c.title = (body && body.conversation && body.conversation.title) || title;
      if (state.conversation && state.conversation.id === c.id) setConversation({ id: c.id, title: c.title });
    } finally {
      renderConversations();
    }
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.isComposing) { ev.preventDefault(); finish(true); }
    if (ev.key === 'Escape') { ev.preventDefault(); ev.stopPropagation(); finish(false); }
  });
  input.addEventListener('blur', () => finish(true));
  item.textContent = '';
  item.append(input);
  input.focus();
  input.select();
}

async function deleteConversation(c) {
  const title = c.title || 'Untitled conversation';
  const turns = typeof c.turns === 'number' ? c.turns : (c.turns || []).length;
  if (!await confirmDialog(`Delete the conversation “${title}” and its ${plural(turns, 'turn')}?`, 'Delete')) return;
  await api('DELETE', `/v1/conversations/${enc(c.id)}`);
  if (state.conversation && state.conversation.id === c.id) newConversation();
  await loadConversations();
}

/** Shows a stored conversation, turn by turn, and makes it the current one. */
async function openConversation(id) {
  if (state.streaming) state.streaming.abort();
  const body = await api('GET', `/v1/conversations/${enc(id)}`);
  const conv = body && body.conversation;
  if (!conv) throw new Error(`conversation ${id} came back empty`);
  closePanel();
  clearError();
  setConversation(conv);
  const turns = conv.turns || [];
  clearChatLog(turns.length ? '' : 'No questions in this conversation yet.');
  for (const turn of turns) {
    appendQuestion(turn.question);
    const msg = appendMessage('assistant');
    if (turn.answer) {
      finishAnswer(msg, turn.question, turn.answer, conv.id);
    } else {
      msg.node.dataset.state = 'error';
      msg.node.classList.add('failed');
      msg.bubble.textContent = '(no answer was saved)';
    }
  }
  renderConversations();
  scrollChat();
}

/** After a reload: the conversation that was open, if the server still has it. */
export async function resumeConversation() {
  const id = localStorage.getItem(CONVERSATION_KEY);
  if (!id || state.conversation || $('#chat-log').querySelector('.msg')) return;
  try {
    await openConversation(id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      setConversation(null);
      return;
    }
    throw err;
  }
}
