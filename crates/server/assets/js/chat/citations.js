// Chat: the citation side panel, with the cited passage, its document and a cited picture.
import { $, el } from '../dom.js';
import { citedPath, formatBytes, formatPages, normalize } from '../format.js';
import { renderMarkdown } from '../markdown.js';
import { api, check, pictureUrl, sourceUrl, token } from '../api.js';
import { guard } from '../ui.js';

export function closePanel() {
  $('#chunk-panel').hidden = true;
  for (const a of document.querySelectorAll('a.cite.active')) a.classList.remove('active');
}

/** How well a chunk of the document matches the citation (0 = not at all). */
function matchScore(chunk, cit) {
  const ct = normalize(chunk.text);
  const xt = normalize(cit.text);
  let score = 0;
  if (xt && ct) {
    if (ct === xt) score += 100;
    else if (ct.includes(xt) || xt.includes(ct)) score += 60;
    else if (xt.length > 40 && ct.includes(xt.slice(0, 40))) score += 30;
  }
  if (cit.heading && chunk.heading) {
    const ch = normalize(chunk.heading);
    const xh = normalize(cit.heading);
    if (ch === xh) score += 10;
    else if (ch.endsWith(xh) || xh.endsWith(ch)) score += 5;
  }
  if (cit.pages !== undefined && cit.pages !== null && formatPages(cit.pages) === formatPages(chunk.pages)) score += 1;
  return score;
}

// Pictures browsers show; a TIFF is offered as a file instead.
const SHOWN_PICTURE = /\.(png|jpe?g|webp)$/i;

/**
 * Where the page loads a picture from: its endpoint, or, when the server wants a token
 * (which an <img> cannot send), its bytes fetched with the token as a data: URL (the page's
 * CSP allows images from 'self' and data: only).
 */
async function pictureSrc(url) {
  if (!token()) return url;
  const res = await check(await fetch(url, { headers: { Authorization: `Bearer ${token()}` } }));
  const blob = await res.blob();
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** A cited picture in the panel: a thumbnail that opens the whole picture, or a TIFF's link. */
async function renderPicture(cit) {
  const box = $('#chunk-picture');
  box.textContent = '';
  box.hidden = !cit.image;
  if (!cit.image) return;
  const pic = cit.image;
  const url = pictureUrl(cit.skill, pic.path);
  const name = String(pic.path).split('/').pop();
  const size = `${pic.width}×${pic.height} px · ${formatBytes(pic.bytes)}`;
  const label = cit.heading || citedPath(cit);
  if (!SHOWN_PICTURE.test(pic.path)) {
    const link = el('a', { href: url, download: name, dataset: { testid: 'picture-link' } }, `Download ${name}`);
    link.addEventListener('click', guard(async (ev) => {
      if (!token()) return;
      ev.preventDefault();
      el('a', { href: await pictureSrc(url), download: name }).click();
    }));
    box.append(link, el('div', { class: 'picture-meta', text: `${size} (browsers do not show TIFF)` }));
    return;
  }
  const src = await pictureSrc(url);
  if (String($('#chunk-panel').dataset.n) !== String(cit.n)) return; // another citation was opened meanwhile
  const thumb = el('img', {
    class: 'thumb', src, alt: label, loading: 'lazy', width: pic.width, height: pic.height,
    dataset: { testid: 'picture-thumb' },
  });
  const open = el('a', { href: url, class: 'picture-open', title: 'Show the whole picture' }, thumb);
  open.addEventListener('click', (ev) => {
    ev.preventDefault();
    showPicture(src, label, `${citedPath(cit)} · ${size}`);
  });
  box.append(open, el('div', { class: 'picture-meta', text: size }));
}

/** The whole picture, at its own size, in a dialog over the page. */
function showPicture(src, label, sub) {
  const img = $('#picture-full');
  img.src = src;
  img.alt = label;
  $('#picture-title').textContent = label;
  $('#picture-sub').textContent = sub;
  const dialog = $('#picture-view');
  if (!dialog.open) dialog.showModal();
}

export async function openCitation(cit) {
  const panel = $('#chunk-panel');
  panel.hidden = false;
  panel.dataset.n = cit.n;
  $('#chunk-title').textContent = `[${cit.n}] ${citedPath(cit)}`;
  $('#chunk-sub').textContent = [cit.heading, cit.label, formatPages(cit.pages)].filter(Boolean).join(' · ');
  guard(renderPicture)(cit);
  renderMarkdown($('#chunk-cited'), cit.text);
  $('#chunk-doc-head').textContent = 'Document';
  const doc = $('#chunk-doc');
  doc.textContent = 'Loading the document…';

  const body = await api('GET', sourceUrl(cit.skill, cit.source)).catch((err) => {
    doc.textContent = '';
    throw err;
  });
  if (String(panel.dataset.n) !== String(cit.n)) return; // another citation was opened meanwhile
  const chunks = (body && body.chunks) || [];
  $('#chunk-doc-head').textContent = `Document · ${chunks.length} chunk${chunks.length === 1 ? '' : 's'}`;
  doc.textContent = '';
  let best = null;
  let bestScore = 0;
  let bestText = '';
  const nodes = chunks.map((c) => {
    const text = el('div', { class: 'chunk-text' });
    renderMarkdown(text, c.text);
    const node = el('div', { class: 'doc-chunk', dataset: { testid: 'doc-chunk', ordinal: c.ordinal } },
      el('div', { class: 'chunk-head', text: [`#${c.ordinal}`, c.heading, formatPages(c.pages)].filter((x) => x !== '' && x !== null && x !== undefined).join(' · ') }),
      text);
    const score = matchScore(c, cit);
    if (score > bestScore) { best = node; bestScore = score; bestText = c.text; }
    return node;
  });
  doc.append(...nodes);
  if (best) {
    best.classList.add('cited');
    best.dataset.cited = 'true';
    if (!cit.text) renderMarkdown($('#chunk-cited'), bestText);
    best.scrollIntoView({ block: 'nearest' });
  }
}
