// The HTTP API client of `skillrag serve` (docs/http-api.md): the token, JSON requests, errors.
import { $ } from './dom.js';
import { TOKEN_KEY } from './state.js';

export const enc = encodeURIComponent;

export function sourceUrl(skill, source) {
  const path = String(source).split('/').map(encodeURIComponent).join('/');
  return `/v1/skills/${encodeURIComponent(skill)}/sources/${path}`;
}

// A cited picture's bytes (`citations[].image.path`).
export function pictureUrl(skill, path) {
  const p = String(path).split('/').map(encodeURIComponent).join('/');
  return `/v1/skills/${encodeURIComponent(skill)}/pictures/${p}`;
}

export class ApiError extends Error {
  constructor(status, body, fallback) {
    const e = body && body.error ? body.error : null;
    super(e && e.message ? e.message : fallback || `HTTP ${status}`);
    this.status = status;
    this.code = e && e.code !== undefined ? e.code : status;
    this.type = e && e.type ? e.type : 'http_error';
    // What a refusal names beside its message: the form `field`, lint's `diagnostics`.
    this.field = e && e.field ? e.field : null;
    this.diagnostics = e && Array.isArray(e.diagnostics) ? e.diagnostics : [];
  }
}
export class AuthError extends Error {}

export const token = () => localStorage.getItem(TOKEN_KEY) || '';

export function headers(json) {
  const h = { Accept: 'application/json' };
  if (json) h['Content-Type'] = 'application/json';
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

function needToken() {
  const bar = $('#auth-bar');
  bar.classList.remove('hidden');
  $('#auth-token').value = token();
  $('#auth-token').focus();
}

/** Throws ApiError/AuthError for a failed response (reading its error JSON). */
export async function check(res) {
  if (res.ok) return res;
  if (res.status === 401) {
    needToken();
    throw new AuthError('unauthorized');
  }
  let body = null;
  let text = '';
  try {
    text = await res.text();
    body = JSON.parse(text);
  } catch (_) { /* not JSON */ }
  const err = new ApiError(res.status, body, text ? `HTTP ${res.status}: ${text.slice(0, 200)}` : `HTTP ${res.status}`);
  err.retryAfter = res.headers.get('Retry-After');
  throw err;
}

export async function api(method, path, body, opts = {}) {
  const res = await fetch(path, {
    method,
    headers: headers(body !== undefined),
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: opts.signal,
  });
  await check(res);
  if (res.status === 204) return null;
  return res.json();
}

/** A request with a text body (a SKILL.md), answered with JSON. */
export async function apiText(method, path, text, contentType = 'text/markdown') {
  const h = headers(false);
  h['Content-Type'] = `${contentType}; charset=utf-8`;
  const res = await fetch(path, { method, headers: h, body: text });
  await check(res);
  return res.json();
}

/** A GET answered with text (a SKILL.md). */
export async function getText(path) {
  const res = await fetch(path, { headers: { ...headers(false), Accept: 'text/markdown, text/plain' } });
  await check(res);
  return res.text();
}
