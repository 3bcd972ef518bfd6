// Markdown rendering of answers and passages with the vendored markdown-it
// (assets/markdown-it.min.js, a classic script the page loads before its modules, so
// `window.markdownit` is there when this module runs): a CommonMark-tested parser whose
// documented safe mode (`html: false`) escapes raw HTML, which is simpler to trust than a
// renderer of our own.
//
// Answers and passages quote knowledge files, which nobody vetted for a browser, so a file
// must not be able to inject markup: `html: false` makes `<script>`, `<img onerror=…>` and
// every other tag literal text. On top of markdown-it's own checks: only http(s) links are
// links (a relative one would resolve against this page, not the file, so it shows as its
// label with the target as a tooltip; any other scheme stays literal text), images show as
// their alt text (the page loads nothing a file names), and no reference definitions, so a
// `[1]: url` line cannot turn a citation marker into its link.
import { el } from './dom.js';

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// http(s), or relative: no scheme, i.e. no ':' before the first '/', '?' or '#'.
const SAFE_URL = /^(?:https?:\/\/|[^:/?#]*(?:[/?#]|$))/i;
const ABSOLUTE_URL = /^https?:\/\//i;

function markdown(breaks) {
  if (typeof window.markdownit !== 'function') return null;
  const m = window.markdownit({ html: false, linkify: true, breaks, typographer: false });
  m.disable('reference');
  // Only URLs written with their scheme: file names such as `setup.md` are not domains.
  m.linkify.set({ fuzzyLink: false, fuzzyEmail: false });
  m.validateLink = (url) => SAFE_URL.test(url.trim());
  m.renderer.rules.image = (tokens, idx, options, env, self) => {
    const alt = self.renderInlineAsText(tokens[idx].children || [], options, env);
    return `<span class="md-image">${escapeHtml(alt ? `[image: ${alt}]` : '[image]')}</span>`;
  };
  m.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const open = tokens[idx];
    const href = open.attrGet('href') || '';
    if (ABSOLUTE_URL.test(href)) {
      open.attrSet('target', '_blank');
      open.attrSet('rel', 'noopener noreferrer');
    } else {
      open.tag = 'span';
      open.attrs = [['class', 'md-link'], ['title', href]];
      const close = tokens.slice(idx + 1).find((t) => t.type === 'link_close' && t.level === open.level);
      if (close) close.tag = 'span';
    }
    return self.renderToken(tokens, idx, options);
  };
  return m;
}
// Answers keep their line breaks (the footnotes under an answer are one per line); knowledge
// files are hard-wrapped Markdown, so a single newline in a passage is a space.
export const mdAnswer = markdown(true);
const mdPassage = markdown(false);

/** Renders `text` as Markdown into `target` (replacing its content); plain text without md. */
export function renderMarkdown(target, text, md = mdPassage) {
  target.textContent = '';
  const source = String(text ?? '');
  if (!source) return;
  const body = el('div', { class: md ? 'md' : 'md plain' });
  if (md) body.innerHTML = md.render(source);
  else body.textContent = source;
  target.append(body);
}

/** The text nodes under `root` that are prose: not in code, a code block or a link. */
export function proseTextNodes(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement.closest('code, pre, a') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  return nodes;
}
