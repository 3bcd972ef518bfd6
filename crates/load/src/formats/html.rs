//! HTML main-content extraction, rendered as Markdown.
//!
//! The page is parsed with html5ever (the browser-grade HTML5 parser: implied end tags, misnested
//! markup, entities and raw-text elements such as `<script>` handled as a browser would).
//! The content root is `<main>` (or `role="main"`), else a lone `<article>`, else `<body>`.
//! Scripts, styles, forms, navigation, headers, footers, asides and elements whose role, class or
//! id mark them as navigation are left out. Headings become `#` lines, list items `- ` lines,
//! tables rows (as in DOCX), `<pre>` fenced code; whitespace is collapsed as a browser would.
//!
//! Pictures ([`extract_html_with_pictures`]): each `<img>` of the content is a file beside the
//! page or a `data:` URI (see [`super::embedded`]); the page is walked once to find them, they are
//! read together, and the page is walked again with their text after the block they are in.
use std::collections::HashMap;

use markup5ever_rcdom::{Handle, NodeData};
use skillrag_core::is_east_asian_or_fullwidth_form;

use super::embedded::{self, HtmlSource, Pictures};
use super::html_guard::{parse_limited, MAX_HTML_DEPTH};
use super::markdown::{clean_inline, normalize_text, render_blocks, Block, Cell, TableBuilder};
use super::{ExtractError, Extracted};

/// The main content of an HTML page as Markdown; an error when the page nests elements
/// deeper than [`MAX_HTML_DEPTH`] (parsing that takes time quadratic in the depth). Its
/// pictures are left out.
pub fn extract_html(text: &str) -> Result<Extracted, ExtractError> {
    extract_html_with_pictures(text, &mut Pictures::none())
}

/// As [`extract_html`], with the text of the page's pictures, read by `pictures`, after the
/// block each is in. Pictures are files in the folder [`Pictures::beside`] names (the page's
/// own) or below it, or `data:` URIs; one that cannot be read is a warning in `pictures`.
pub fn extract_html_with_pictures(text: &str, pictures: &mut Pictures<'_>) -> Result<Extracted, ExtractError> {
    let dom = parse_limited(text, MAX_HTML_DEPTH).map_err(|deep| ExtractError::TooDeep {
        line: deep.line,
        what: "HTML",
        limit: MAX_HTML_DEPTH,
    })?;
    let document = dom.document.clone();
    let title = find_element(&document, |n| element_name(n) == Some("title"))
        .map(|t| clean_inline(&text_content(&t)))
        .filter(|t| !t.is_empty());
    let body = find_element(&document, |n| element_name(n) == Some("body")).unwrap_or_else(|| document.clone());
    let root = content_root(&body);

    let collect = if pictures.active() { Images::Collect } else { Images::Off };
    let mut walked = (root.clone(), false);
    let mut out = Walker::new(false, collect.clone()).run(&root);
    if out.blocks.is_empty() && !std::rc::Rc::ptr_eq(&root, &body) {
        walked = (body.clone(), false);
        out = Walker::new(false, collect.clone()).run(&body);
    }
    if out.blocks.is_empty() {
        // Everything looked like navigation: better the whole page than nothing.
        walked = (body.clone(), true);
        out = Walker::new(true, collect).run(&body);
    }
    let mut blocks = out.blocks;
    for (src, alt) in &out.images {
        note(pictures, src, alt.as_deref());
    }
    if pictures.any_found() {
        let (folder, max_bytes) = (pictures.folder(), pictures.limit_bytes());
        let texts = pictures.read_all(|key| match folder {
            _ if key.starts_with("data:") => embedded::decode_data(key, max_bytes),
            Some(folder) => embedded::read_beside(folder, key, max_bytes),
            None => Err("the page's folder is not known".to_string()),
        });
        if !texts.is_empty() {
            blocks = Walker::new(walked.1, Images::Fill(texts)).run(&walked.0).blocks;
        }
    }
    let title = title
        .or_else(|| {
            blocks.iter().find_map(|b| match b {
                Block::Heading(1, t) => Some(clean_inline(t)),
                _ => None,
            })
        })
        .map(|t| normalize_text(&t));
    Ok(Extracted { text: normalize_text(&render_blocks(&blocks)), markdown: true, title, ..Default::default() })
}

/// Records a picture of the page, met in the content (the first walk).
fn note(pictures: &mut Pictures<'_>, src: &str, alt: Option<&str>) {
    match embedded::html_source(src) {
        HtmlSource::Beside { path, extension } => {
            if pictures.folder().is_some() {
                pictures.found(&path, &path, &embedded::label(alt, embedded::file_name(&path)), &extension);
            }
        }
        HtmlSource::Data { extension } => {
            let fallback = format!("image/{extension}");
            pictures.found(src.trim(), &embedded::data_name(src), &embedded::label(alt, &fallback), extension)
        }
        HtmlSource::Refused(why) => pictures.not_read(src.trim(), why),
        HtmlSource::Ignored => {}
    }
}

/// The key a picture was recorded under by [`note`].
fn picture_key(src: &str) -> Option<String> {
    match embedded::html_source(src) {
        HtmlSource::Beside { path, .. } => Some(path),
        HtmlSource::Data { .. } => Some(src.trim().to_string()),
        HtmlSource::Refused(_) | HtmlSource::Ignored => None,
    }
}

/// What a walk does with `<img>`.
#[derive(Clone)]
enum Images {
    Off,
    /// Records each `<img>`'s `src` and `alt`.
    Collect,
    /// Writes the marker paragraph of each picture (by key), at its first place.
    Fill(HashMap<String, String>),
}

/// What a walk found.
struct Walked {
    blocks: Vec<Block>,
    /// `(src, alt)` of the `<img>` elements met, when collecting.
    images: Vec<(String, Option<String>)>,
}

/// Elements never shown as text.
const NEVER_TEXT: [&str; 23] = [
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed", "canvas", "video", "audio",
    "select", "button", "input", "textarea", "head", "title", "meta", "link", "dialog", "map", "datalist",
];

/// Words in a class or id that mark navigation and page chrome (matched as whole words of
/// `site-nav`, `mainMenu`, `sidebar_left`…, never as substrings: `canvas` is not `nav`).
const CHROME_WORDS: [&str; 17] = [
    "nav",
    "navbar",
    "navigation",
    "sidenav",
    "topnav",
    "subnav",
    "menu",
    "menubar",
    "sidebar",
    "breadcrumb",
    "breadcrumbs",
    "footer",
    "cookie",
    "cookies",
    "toc",
    "pagination",
    "skiplink",
];

/// ARIA roles of page chrome.
const CHROME_ROLES: [&str; 10] = [
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "menu",
    "menubar",
    "dialog",
    "alertdialog",
    "toolbar",
];

/// Most nodes looked at when checking whether a candidate for removal holds the page's content.
const CONTENT_PROBE_NODES: usize = 20_000;

fn element_name(node: &Handle) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attribute(node: &Handle, attr: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => {
            attrs.borrow().iter().find(|a| &*a.name.local == attr).map(|a| a.value.to_string())
        }
        _ => None,
    }
}

fn role(node: &Handle) -> Option<String> {
    attribute(node, "role").map(|r| r.trim().to_ascii_lowercase())
}

/// The first element in document order for which `pred` holds (iterative: pages can be deep).
fn find_element(root: &Handle, pred: impl Fn(&Handle) -> bool) -> Option<Handle> {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if pred(&node) {
            return Some(node);
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

fn text_content(node: &Handle) -> String {
    let mut out = String::new();
    let mut stack = vec![node.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            out.push_str(&contents.borrow());
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    out
}

fn is_main(node: &Handle) -> bool {
    element_name(node) == Some("main") || role(node).as_deref() == Some("main")
}

/// `<main>`/`role="main"`, else the only top-level `<article>`, else the body.
fn content_root(body: &Handle) -> Handle {
    if let Some(main) = find_element(body, is_main) {
        return main;
    }
    let mut articles = Vec::new();
    let mut stack = vec![body.clone()];
    while let Some(node) = stack.pop() {
        if element_name(&node) == Some("article") {
            articles.push(node);
            continue; // nested articles (comments) belong to this one
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    if articles.len() == 1 {
        articles.pop().unwrap_or_else(|| body.clone())
    } else {
        body.clone()
    }
}

/// Whether the element holds what looks like the page's content (so that a `<form>` wrapping a
/// whole ASP.NET page, or a `<div class="has-sidebar">` layout wrapper, is not thrown away).
fn holds_content(node: &Handle) -> bool {
    let mut stack: Vec<Handle> = node.children.borrow().iter().cloned().collect();
    let mut seen = 0;
    let mut paragraphs = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > CONTENT_PROBE_NODES {
            return true;
        }
        match element_name(&n) {
            Some("main" | "article" | "h1") => return true,
            Some("p") => {
                paragraphs += 1;
                if paragraphs >= 3 {
                    return true;
                }
            }
            Some(_) if role(&n).as_deref() == Some("main") => return true,
            _ => {}
        }
        stack.extend(n.children.borrow().iter().cloned());
    }
    false
}

/// Splits `site-nav mainMenu sidebar_left` into lowercase words: site, nav, main, menu, sidebar, left.
fn words(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in value.split(|c: char| c.is_whitespace() || c == '-' || c == '_' || c == ':' || c == '.') {
        let mut word = String::new();
        let mut prev_lower = false;
        for c in token.chars() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word).to_lowercase());
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.push(c);
        }
        if !word.is_empty() {
            out.push(word.to_lowercase());
        }
    }
    out
}

/// Whether a class or id value names page chrome: a chrome word not qualified by has/with/no
/// (`has-sidebar` describes a layout, not a sidebar).
fn names_chrome(value: &str) -> bool {
    let words = words(value);
    words.iter().enumerate().any(|(i, w)| {
        CHROME_WORDS.contains(&w.as_str())
            && (i == 0 || !matches!(words[i - 1].as_str(), "has" | "with" | "no" | "without"))
    })
}

fn is_hidden(node: &Handle) -> bool {
    attribute(node, "hidden").is_some()
        || attribute(node, "aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || attribute(node, "style").is_some_and(|s| {
            let s = s.to_ascii_lowercase().replace([' ', '\t', '\n'], "");
            s.contains("display:none") || s.contains("visibility:hidden")
        })
}

#[derive(Debug, Clone, Copy)]
enum Exit {
    Nothing,
    Block,
    Heading,
    List,
    Item,
    Pre,
    Table,
    Head,
    Row,
    Cell,
    Section,
}

enum Step {
    Enter(Handle),
    Exit(Exit),
}

struct Walker {
    /// Keep everything but never-text elements (used when the strict pass found nothing).
    lenient: bool,
    /// Output blocks; each open table cell collects its own.
    sinks: Vec<Vec<Block>>,
    /// The text of the block being read, whitespace already collapsed.
    inline: String,
    /// Whitespace seen since the last character: `Some(contains a line break)`.
    pending_space: Option<bool>,
    heading: Option<u8>,
    list_depth: u8,
    /// The list item whose first text is not written yet: its nesting level.
    item: Option<u8>,
    pre: u32,
    tables: Vec<TableBuilder>,
    table_count: u32,
    thead: u32,
    /// Inside `<article>`, `<main>` or `<section>`: a `<header>` there is the article's own.
    sections: u32,
    pictures: Images,
    images: Vec<(String, Option<String>)>,
    /// Marker paragraphs of pictures met in the block being read, written after it.
    pending: Vec<String>,
}

impl Walker {
    fn new(lenient: bool, pictures: Images) -> Self {
        Walker {
            lenient,
            sinks: vec![Vec::new()],
            inline: String::new(),
            pending_space: None,
            heading: None,
            list_depth: 0,
            item: None,
            pre: 0,
            tables: Vec::new(),
            table_count: 0,
            thead: 0,
            sections: 0,
            pictures,
            images: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn run(mut self, root: &Handle) -> Walked {
        let mut steps = vec![Step::Enter(root.clone())];
        let mut first = true;
        while let Some(step) = steps.pop() {
            match step {
                Step::Exit(exit) => self.close(exit),
                Step::Enter(node) => {
                    match &node.data {
                        NodeData::Text { contents } => self.text(&contents.borrow()),
                        NodeData::Element { name, .. } => {
                            let tag: &str = &name.local;
                            if !first && self.dropped(&node, tag) {
                                continue;
                            }
                            let exit = self.open(&node, tag);
                            steps.push(Step::Exit(exit));
                            steps.extend(node.children.borrow().iter().rev().map(|c| Step::Enter(c.clone())));
                        }
                        NodeData::Document => {
                            steps.extend(node.children.borrow().iter().rev().map(|c| Step::Enter(c.clone())));
                        }
                        _ => {}
                    }
                    first = false;
                }
            }
        }
        self.flush();
        while let Some(table) = self.tables.pop() {
            let blocks = table.finish();
            if let Some(sink) = self.sinks.last_mut() {
                sink.extend(blocks);
            }
        }
        let mut sinks = self.sinks;
        let mut out = sinks.remove(0);
        out.extend(sinks.into_iter().flatten());
        Walked { blocks: out, images: self.images }
    }

    fn dropped(&self, node: &Handle, tag: &str) -> bool {
        if NEVER_TEXT.contains(&tag) || is_hidden(node) {
            return true;
        }
        if self.lenient || matches!(tag, "html" | "body" | "main" | "article") || is_main(node) {
            return false;
        }
        match tag {
            "nav" | "aside" | "footer" => return true,
            "header" if self.sections == 0 => return true,
            "form" => return !holds_content(node),
            _ => {}
        }
        if let Some(role) = role(node) {
            if CHROME_ROLES.contains(&role.as_str()) && !(role == "banner" && self.sections > 0) {
                return true;
            }
        }
        let chrome = ["class", "id"].iter().any(|a| attribute(node, a).is_some_and(|v| names_chrome(&v)));
        chrome && !holds_content(node)
    }

    fn open(&mut self, node: &Handle, tag: &str) -> Exit {
        match tag {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.flush();
                self.heading = tag[1..].parse().ok();
                Exit::Heading
            }
            "ul" | "ol" | "menu" | "dir" => {
                self.flush();
                self.list_depth = self.list_depth.saturating_add(1);
                Exit::List
            }
            "li" => {
                self.flush();
                self.item = Some(self.list_depth.saturating_sub(1).min(8));
                Exit::Item
            }
            "pre" | "listing" | "xmp" | "plaintext" => {
                self.flush();
                self.pre += 1;
                Exit::Pre
            }
            "img" => {
                if let Some(src) = attribute(node, "src") {
                    match &mut self.pictures {
                        Images::Off => {}
                        Images::Collect => self.images.push((src, attribute(node, "alt"))),
                        Images::Fill(texts) => {
                            if let Some(text) = picture_key(&src).and_then(|key| texts.remove(&key)) {
                                self.pending.push(text);
                            }
                        }
                    }
                }
                Exit::Nothing
            }
            "br" => {
                if self.pre > 0 || !self.inline.is_empty() {
                    self.inline.push('\n');
                }
                self.pending_space = None;
                Exit::Nothing
            }
            "table" => {
                self.flush();
                self.table_count += 1;
                let mut table = TableBuilder::new(self.table_count);
                table.layout = matches!(role(node).as_deref(), Some("presentation" | "none"));
                self.tables.push(table);
                Exit::Table
            }
            "thead" => {
                self.flush();
                self.thead += 1;
                Exit::Head
            }
            "tr" => {
                self.flush();
                if let Some(table) = self.tables.last_mut() {
                    table.start_row();
                    if self.thead > 0 {
                        table.mark_row_header(true);
                    }
                }
                Exit::Row
            }
            "td" | "th" if !self.tables.is_empty() => {
                self.flush();
                let span = |name| attribute(node, name).and_then(|v| v.trim().parse::<u32>().ok()).unwrap_or(1);
                let cell = Cell {
                    colspan: span("colspan"),
                    rowspan: span("rowspan"),
                    header: tag == "th",
                    ..Default::default()
                };
                if let Some(table) = self.tables.last_mut() {
                    table.add_cell(cell);
                }
                self.sinks.push(Vec::new());
                Exit::Cell
            }
            "article" | "main" | "section" => {
                self.flush();
                self.sections += 1;
                Exit::Section
            }
            "p" | "div" | "blockquote" | "dl" | "dt" | "dd" | "figure" | "figcaption" | "address" | "center"
            | "details" | "summary" | "fieldset" | "legend" | "hr" | "caption" | "hgroup" | "body" | "html"
            | "header" | "footer" | "nav" | "aside" | "form" | "tbody" | "tfoot" | "td" | "th" | "option"
            | "optgroup" | "search" => {
                self.flush();
                Exit::Block
            }
            _ => Exit::Nothing,
        }
    }

    fn close(&mut self, exit: Exit) {
        match exit {
            Exit::Nothing => {}
            Exit::Block | Exit::Row => self.flush(),
            Exit::Heading => {
                self.flush();
                self.heading = None;
            }
            Exit::List => {
                self.flush();
                self.list_depth = self.list_depth.saturating_sub(1);
            }
            Exit::Item => {
                self.flush();
                self.item = None;
            }
            Exit::Pre => {
                self.flush();
                self.pre = self.pre.saturating_sub(1);
            }
            Exit::Head => {
                self.flush();
                self.thead = self.thead.saturating_sub(1);
            }
            Exit::Section => {
                self.flush();
                self.sections = self.sections.saturating_sub(1);
            }
            Exit::Cell => {
                self.flush();
                let blocks = if self.sinks.len() > 1 { self.sinks.pop().unwrap_or_default() } else { Vec::new() };
                if let Some(table) = self.tables.last_mut() {
                    table.set_last_cell_blocks(blocks);
                }
            }
            Exit::Table => {
                self.flush();
                if let Some(table) = self.tables.pop() {
                    let blocks = table.finish();
                    if let Some(sink) = self.sinks.last_mut() {
                        sink.extend(blocks);
                    }
                }
            }
        }
    }

    fn text(&mut self, text: &str) {
        if self.pre > 0 {
            self.inline.push_str(text);
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                let newline = c == '\n' || c == '\r';
                self.pending_space = Some(self.pending_space.unwrap_or(false) || newline);
                continue;
            }
            if let Some(newline) = self.pending_space.take() {
                let last = self.inline.chars().next_back();
                // A line break between two CJK characters is no space (CSS segment break rules).
                let cjk_join =
                    newline && last.is_some_and(is_east_asian_or_fullwidth_form) && is_east_asian_or_fullwidth_form(c);
                if last.is_some_and(|l| l != '\n') && !cjk_join {
                    self.inline.push(' ');
                }
            }
            self.inline.push(c);
        }
    }

    /// Ends the block being read; the text of the pictures in it follows.
    fn flush(&mut self) {
        self.flush_text();
        if !self.pending.is_empty() {
            let pictures = std::mem::take(&mut self.pending);
            if let Some(sink) = self.sinks.last_mut() {
                sink.extend(pictures.into_iter().map(Block::Para));
            }
        }
    }

    fn flush_text(&mut self) {
        self.pending_space = None;
        if self.inline.is_empty() {
            return;
        }
        let inline = std::mem::take(&mut self.inline);
        let block = if self.pre > 0 {
            let code = inline.trim_end();
            let code = code.trim_start_matches(['\n', '\r']);
            if code.trim().is_empty() {
                return;
            }
            Block::Code(code.to_string())
        } else {
            let text = inline.trim();
            if text.is_empty() {
                return;
            }
            if let Some(level) = self.heading {
                Block::Heading(level, text.to_string())
            } else if let Some(level) = self.item.take() {
                Block::ListItem(level, text.to_string())
            } else {
                Block::Para(text.to_string())
            }
        };
        if let Some(sink) = self.sinks.last_mut() {
            sink.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_content_headings_lists_and_entities() {
        let html = r#"<!DOCTYPE html><html><head><title> Leave   policy &amp; rules </title>
            <style>body { color: red }</style><script>var nav = "<p>not text</p>";</script></head>
            <body><header><a href="/">Home</a> <nav><ul><li>About</li><li>Contact</li></ul></nav></header>
            <div class="sidebar">Related links</div>
            <main><h1>Annual leave</h1>
            <p>Employees   get
               <b>15&nbsp;days</b> per year.<br>Part-time staff: pro rata.</p>
            <p>Carry-over rules:
            <ul><li>Up to 5 days<ul><li>Approved by a manager</li></ul></li><li>Expires in March</li></ul>
            <h2>Sick leave</h2><p>See &lt;HR&gt; &#x2014; form S-1.</p>
            </main><footer>© 2024 Example Corp</footer></body></html>"#;
        let out = extract_html(html).unwrap();
        assert!(out.markdown);
        assert_eq!(out.title.as_deref(), Some("Leave policy & rules"));
        assert_eq!(
            out.text,
            "# Annual leave\n\nEmployees get 15 days per year.\nPart-time staff: pro rata.\n\nCarry-over rules:\n\n\
             - Up to 5 days\n  - Approved by a manager\n- Expires in March\n\n## Sick leave\n\nSee <HR> — form S-1."
        );
    }

    #[test]
    fn without_main_the_body_minus_chrome() {
        let html = r#"<body class="page has-sidebar">
            <div id="mainNav"><a>Home</a></div>
            <div class="breadcrumbs">Home › Docs</div>
            <div class="cookie-banner">We use cookies</div>
            <div role="navigation">Menu</div>
            <div class="canvas-wrapper"><h1>Title</h1><p>Body text.</p></div>
            <aside>Ads</aside>
            <form action="/search"><input name="q"><button>Go</button></form>
            <div class="site-footer">Footer</div></body>"#;
        let out = extract_html(html).unwrap();
        assert_eq!(out.text, "# Title\n\nBody text.");
        assert_eq!(out.title.as_deref(), Some("Title"));
    }

    #[test]
    fn lone_article_wins_and_keeps_its_header() {
        let html = r#"<div class="menu">Top menu</div><p>Teaser outside.</p>
            <article><header><h1>Post</h1></header><p>Text.</p><footer>Tags: a, b</footer></article>"#;
        assert_eq!(extract_html(html).unwrap().text, "# Post\n\nText.");
    }

    #[test]
    fn page_wrapped_in_a_form_or_chrome_class_is_kept() {
        let html = r#"<form id="form1"><div class="nav">Links</div><h1>Report</h1><p>One.</p><p>Two.</p></form>"#;
        assert_eq!(extract_html(html).unwrap().text, "# Report\n\nOne.\n\nTwo.");
        let html =
            r#"<div class="content-with-sidebar"><p>Kept.</p></div><div class="menu-wrap"><h1>T</h1><p>x</p></div>"#;
        assert_eq!(extract_html(html).unwrap().text, "Kept.\n\n# T\n\nx");
        // Only chrome: the whole page rather than nothing.
        assert_eq!(extract_html(r#"<nav>Only links</nav>"#).unwrap().text, "Only links");
    }

    #[test]
    fn tables_as_markdown_tables() {
        let html = r#"<table><thead><tr><th>Plan</th><th>Price</th></tr></thead>
            <tbody><tr><td>Basic</td><td>10</td></tr><tr><td rowspan="2">Pro</td><td>30</td></tr><tr><td>35</td></tr></tbody></table>
            <table><tr><td>Name</td><td>Ada</td></tr><tr><td>Age</td><td></td></tr></table>
            <table role="presentation"><tr><td><p>Layout one.</p></td><td><p>Layout two.</p></td></tr></table>"#;
        assert_eq!(
            extract_html(html).unwrap().text,
            "| Plan | Price |\n|---|---|\n| Basic | 10 |\n| Pro | 30 |\n| Pro | 35 |\n\n\
             |  |  |\n|---|---|\n| Name | Ada |\n| Age |  |\n\nLayout one.\n\nLayout two."
        );
    }

    #[test]
    fn pre_is_fenced_and_keeps_whitespace() {
        let html = "<p>Run:</p><pre><code>cargo build\n    --release\n</code></pre><p>Done.</p>";
        assert_eq!(extract_html(html).unwrap().text, "Run:\n\n```\ncargo build\n    --release\n```\n\nDone.");
    }

    #[test]
    fn chinese_line_breaks_are_joined_without_spaces() {
        let html = "<p>劳动合同\n应当书面订立。\nEnglish\nwords 与中文。</p><h1>标题</h1>";
        let out = extract_html(html).unwrap();
        assert_eq!(out.text, "劳动合同应当书面订立。 English words 与中文。\n\n# 标题");
        assert_eq!(out.title.as_deref(), Some("标题"));
    }

    #[test]
    fn hidden_and_markdown_like_text() {
        let html = r#"<p hidden>secret</p><p style="display: none">gone</p><p aria-hidden="true">icon</p><p># not a heading</p><template><p>tpl</p></template>"#;
        assert_eq!(extract_html(html).unwrap().text, "\\# not a heading");
    }

    #[test]
    fn class_words() {
        assert!(names_chrome("site-nav"));
        assert!(names_chrome("mainNav"));
        assert!(names_chrome("navbar navbar-expand"));
        assert!(names_chrome("sidebar_left"));
        assert!(names_chrome("breadcrumb"));
        assert!(!names_chrome("canvas"));
        assert!(!names_chrome("navigator-info unavailable"));
        assert!(!names_chrome("has-sidebar"));
        assert!(!names_chrome("menuitem-price"));
    }

    #[test]
    fn huge_inline_script_is_fast_and_left_out() {
        let mut html = String::from("<html><head><title>Big</title><script>");
        let line = "var x = \"<p>not content</p>\"; if (a < b && c > d) { document.write('</div>'); }\n";
        while html.len() < 10 * 1024 * 1024 {
            html.push_str(line);
        }
        html.push_str("</script></head><body><p>Real content.</p></body></html>");
        let start = std::time::Instant::now();
        let out = extract_html(&html).unwrap();
        let elapsed = start.elapsed();
        assert_eq!(out.text, "Real content.");
        assert_eq!(out.title.as_deref(), Some("Big"));
        // html5ever's tokenizer is generic over the tree sink, so it is compiled with this crate's
        // optimization level: ~0.3 s in release, several seconds in an unoptimized test build.
        let limit = if cfg!(debug_assertions) { 60 } else { 1 };
        assert!(elapsed < std::time::Duration::from_secs(limit), "{elapsed:?}");
    }

    #[test]
    fn policy_from_testdata() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/documents/policy.html");
        let html = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let out = extract_html(&html).unwrap();
        assert_eq!(out.title.as_deref(), Some("退换货政策 Return Policy"));
        assert!(out.text.starts_with("# 退换货政策 Return Policy\n\n自签收之日起 30 天内，"), "{}", out.text);
        for expected in [
            "\n## 退货条件 Conditions\n\n- 保留原始发票或订单号。Keep the invoice or the order number.\n- 配件",
            "\n### 运费 Shipping costs\n\n质量问题导致的退货由我们承担运费；其他情况由买家承担。We pay return shipping for defective products;",
            "\n## 退款时间 Refund times\n\n| 支付方式 Payment | 到账时间 Refund time |\n|---|---|\n\
             | 信用卡 Credit card | 3–7 个工作日 3–7 working days |\n| 支付宝 Alipay | 1–3 个工作日 1–3 working days |",
        ] {
            assert!(out.text.contains(expected), "{expected:?} not in\n{}", out.text);
        }
        for chrome in ["analytics", "font-family", "首页 Home", "Free shipping", "Related", "Warranty", "©", "Hotline"]
        {
            assert!(!out.text.contains(chrome), "{chrome:?} in\n{}", out.text);
        }
    }

    #[test]
    fn nesting_up_to_the_limit_is_read() {
        let depth = MAX_HTML_DEPTH - 10;
        let html = format!("{}deep{}", "<div>".repeat(depth), "</div>".repeat(depth));
        assert_eq!(extract_html(&html).unwrap().text, "deep");
    }

    #[test]
    fn nesting_past_the_limit_is_refused_quickly() {
        // 100 000 levels took 37 s in release before the limit (html5ever is quadratic in depth).
        let html = format!("<p>intro</p>\n{}deep{}", "<div>".repeat(100_000), "</div>".repeat(100_000));
        let start = std::time::Instant::now();
        let err = extract_html(&html).unwrap_err();
        assert_eq!(err, ExtractError::TooDeep { line: 2, what: "HTML", limit: MAX_HTML_DEPTH });
        assert!(err.to_string().contains("deeper than 1000 levels"), "{err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
        // Deep but flat-closing markup (unclosed `<p>` are siblings, not nesting) is fine.
        let html = "<p>para".repeat(20_000);
        assert!(extract_html(&html).unwrap().text.starts_with("para\n\npara"));
    }

    /// "Reads" a picture as its bytes (the test pictures are text).
    fn echo(bytes: &[u8], _: &str) -> Result<String, String> {
        String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string())
    }

    #[test]
    fn pictures_follow_the_block_they_are_in() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("img")).unwrap();
        std::fs::write(tmp.path().join("img/hours.png"), "Open 9 to 5").unwrap();
        std::fs::write(tmp.path().join("logo.png"), "ACME").unwrap();
        let html = r#"<nav><img src="logo.png" alt="Logo"></nav><main>
            <h1>Hours <img src="./img/hours.png"></h1>
            <ul><li>First <img src="img/hours.png" alt="again"> item</li><li>Second</li></ul>
            <p>Inline <img src="data:image/png;base64,5b2i5byP" alt=" Shape "> text.</p>
            <p><img src="https://example.com/a.png"><img src="diagram.svg"><img src="missing.png"><img src="../up.png"></p>
            <table><tr><th>Plan</th><th>Card</th></tr><tr><td>Pro</td><td><img src="logo.png"></td></tr></table>
            </main>"#;
        let reader = echo;
        let mut pictures = Pictures::new(&reader).beside(tmp.path());
        let out = extract_html_with_pictures(html, &mut pictures).unwrap();
        assert_eq!(
            out.text,
            "# Hours\n\n[image: hours.png] Open 9 to 5\n\n- First item\n- Second\n\nInline text.\n\n[image: Shape] 形式\n\n\
             | Plan | Card |\n|---|---|\n| Pro | [image: logo.png] ACME |"
        );
        assert_eq!(out.title.as_deref(), Some("Hours"));
        assert_eq!(
            pictures.warnings(),
            [
                "picture `../up.png` not read: its path leaves the page's folder (`..`); only pictures in the page's folder or below it are read",
                "picture `missing.png` not read: there is no such file beside the page",
            ]
        );
        // Without the page's folder only the pictures it holds are read; without a reader none.
        let mut pictures = Pictures::new(&reader);
        let out = extract_html_with_pictures(html, &mut pictures).unwrap();
        assert!(out.text.contains("[image: Shape] 形式") && !out.text.contains("Open 9 to 5"), "{}", out.text);
        assert_eq!(
            extract_html(html).unwrap().text,
            "# Hours\n\n- First item\n- Second\n\nInline text.\n\n| Plan | Card |\n|---|---|\n| Pro |  |"
        );
    }

    #[test]
    fn a_page_of_only_navigation_still_shows_its_pictures() {
        let html = r#"<nav><img src="data:image/gif;base64,bmF2aWdhdGlvbg==">Links</nav>"#;
        let reader = echo;
        let out = extract_html_with_pictures(html, &mut Pictures::new(&reader)).unwrap();
        assert_eq!(out.text, "Links\n\n[image: image/gif] navigation");
    }

    #[test]
    fn empty_and_plain_inputs() {
        assert_eq!(extract_html("").unwrap().text, "");
        assert_eq!(extract_html("").unwrap().title, None);
        assert_eq!(extract_html("just text").unwrap().text, "just text");
    }
}
