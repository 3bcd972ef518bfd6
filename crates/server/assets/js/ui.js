// Failures shown in the error banner, and the page's confirmation dialog.
import { $ } from './dom.js';
import { ApiError, AuthError } from './api.js';

export function showError(message) {
  $('#error-text').textContent = message;
  $('#error-banner').classList.remove('hidden');
}
export function clearError() {
  $('#error-banner').classList.add('hidden');
  $('#error-text').textContent = '';
}
export function describe(err) {
  if (err instanceof ApiError) {
    const retry = err.retryAfter ? ` (retry after ${err.retryAfter} s)` : '';
    return `${err.type} (${err.code}): ${err.message}${retry}`;
  }
  if (err && err.name === 'TypeError' && /fetch|network/i.test(err.message)) {
    return `network error: cannot reach the server (${err.message})`;
  }
  return `error: ${err && err.message ? err.message : err}`;
}
/** Reports a failed action: API errors in the banner, a 401 through the token form. */
function report(err) {
  if (err instanceof AuthError) return;
  if (err && err.name === 'AbortError') return;
  showError(describe(err));
  if (!(err instanceof ApiError)) console.error(err);
}
/** Wraps an async event handler so that a failure always ends in the banner. */
export const guard = (fn) => (...args) => Promise.resolve().then(() => fn(...args)).catch(report);

/** Asks in the page's own dialog (not window.confirm); resolves true for OK. */
export function confirmDialog(message, okLabel = 'OK') {
  const dialog = $('#confirm-view');
  $('#confirm-text').textContent = message;
  $('#confirm-ok').textContent = okLabel;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
    $('#confirm-cancel').focus();
  });
}
