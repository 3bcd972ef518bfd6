// The streamed answer of /v1/ask (server-sent events).
import { ApiError, check, headers } from '../api.js';

/**
 * POSTs a question to /v1/ask with `stream: true` and calls onText for every `text` event
 * (a checked sentence of an LLM answer); resolves with the Answer JSON of the `answer` event.
 * An `error` event rejects with its ApiError. A server that answers without SSE gives the
 * Answer JSON directly.
 */
export async function streamAsk(body, signal, onText) {
  const res = await fetch('/v1/ask', {
    method: 'POST',
    headers: { ...headers(true), Accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  await check(res);
  const type = res.headers.get('Content-Type') || '';
  if (!type.includes('text/event-stream')) return res.json();
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data = [];
  let answer = null;
  const dispatch = () => {
    const name = event || 'message';
    const payload = data.join('\n');
    event = '';
    data = [];
    if (!payload) return;
    let parsed;
    try {
      parsed = JSON.parse(payload);
    } catch (_) {
      throw new Error(`unreadable stream event: ${payload.slice(0, 120)}`);
    }
    if (name === 'error' || (parsed && parsed.error)) {
      throw new ApiError((parsed && parsed.error && parsed.error.code) || 500, parsed, 'stream error');
    }
    if (name === 'text') {
      if (parsed && typeof parsed.text === 'string') onText(parsed.text);
    } else if (name === 'answer') {
      answer = parsed;
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') dispatch();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      // `id:`, `retry:` and `:` comments are ignored
    }
    if (done) {
      if (buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''));
      dispatch();
      break;
    }
  }
  if (!answer) throw new Error('the answer stream ended without an answer');
  return answer;
}
