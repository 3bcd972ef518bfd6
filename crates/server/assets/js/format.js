// How the page writes numbers, sizes, pages, times and cited paths.
import { dash } from './dom.js';

/** A number with `digits` decimals, or a dash for null/undefined. */
export function num(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return dash();
  if (typeof x !== 'number') return String(x);
  return x.toFixed(digits);
}

export function formatPages(pages) {
  if (pages === null || pages === undefined || pages === '') return '';
  if (Array.isArray(pages)) {
    const [a, b] = pages;
    if (pages.length === 0) return '';
    if (b === undefined || b === null || a === b) return `p. ${a}`;
    return `pp. ${a}–${b}`;
  }
  if (typeof pages === 'object') {
    const a = pages.start ?? pages.first ?? pages.from;
    const b = pages.end ?? pages.last ?? pages.to;
    if (a !== undefined) return a === b || b === undefined ? `p. ${a}` : `pp. ${a}–${b}`;
    return JSON.stringify(pages);
  }
  return `p. ${pages}`;
}

export function formatBytes(n) {
  if (typeof n !== 'number') return '';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

function toDate(t) {
  if (t === null || t === undefined || t === '') return null;
  // Unix seconds (the API's timestamps), milliseconds, or an ISO string.
  const d = typeof t === 'number' ? new Date(t > 1e12 ? t : t * 1000) : new Date(t);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** `2026-12-03 18:02` in local time, or '' for no time. */
export function formatTime(t) {
  const d = toDate(t);
  if (!d) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** `just now`, `5 min ago`, `3 h ago`, else the date. */
export function ago(t) {
  const d = toDate(t);
  if (!d) return '';
  const s = (Date.now() - d.getTime()) / 1000;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return formatTime(t).slice(0, 10);
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// `skill/source`, or the project path alone for a shared folder's document (`/shared/…`).
export function citedPath(cit) {
  return String(cit.source).startsWith('/') ? cit.source : `${cit.skill}/${cit.source}`;
}

// How a citation is listed under an answer: `skill/location › heading · label`, the label saying
// which articles or words of the section it holds (the Citation's `label`).
export function citedNote(cit) {
  const pages = formatPages(cit.pages);
  return `${citedPath(cit)}${pages ? ` ${pages}` : ''}${cit.heading ? ` › ${cit.heading}` : ''}${cit.label ? ` · ${cit.label}` : ''}`;
}

export const normalize = (s) => String(s || '').replace(/\s+/g, ' ').trim();
