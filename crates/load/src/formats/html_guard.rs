//! Parsing HTML with a nesting limit. html5ever's tree builder scans its stack of open
//! elements for every start tag, so its time grows with the square of the nesting depth:
//! 100 000 nested `<div>` take over half a minute. html5ever has no depth option, so the
//! tree sink below (RcDom, with every call passed through) watches how deep elements are
//! appended, and the input is fed in slices so the parse can stop soon after the limit.
//! Browsers cap the depth too (Chromium's parser at 512).

use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{parse_document, Attribute, ExpandedName, ParseOpts, QualName};
use markup5ever_rcdom::{Handle, RcDom};
use std::borrow::Cow;
use std::cell::Cell;

/// Deepest element nesting accepted; real pages stay well under a hundred.
pub const MAX_HTML_DEPTH: usize = 1_000;

/// Bytes fed to the parser between two depth checks: past the limit, at most this much more
/// nesting is parsed (a few thousand levels, milliseconds).
const SLICE_BYTES: usize = 16 * 1024;

/// Where the document first nests deeper than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based line of the element that went past the limit.
    pub line: usize,
}

/// Parses `text` into an RcDom, or says where it nests deeper than `limit`.
pub fn parse_limited(text: &str, limit: usize) -> Result<RcDom, TooDeep> {
    let sink = DepthGuard { dom: RcDom::default(), limit, line: Cell::new(1), too_deep: Cell::new(None) };
    let mut parser = parse_document(sink, ParseOpts::default());
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(SLICE_BYTES);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (slice, tail) = rest.split_at(cut);
        parser.process(StrTendril::from_slice(slice));
        rest = tail;
        if let Some(line) = parser.tokenizer.sink.sink.too_deep.get() {
            return Err(TooDeep { line });
        }
    }
    let guard = parser.finish();
    match guard.too_deep.get() {
        Some(line) => Err(TooDeep { line }),
        None => Ok(guard.dom),
    }
}

struct DepthGuard {
    dom: RcDom,
    limit: usize,
    line: Cell<usize>,
    too_deep: Cell<Option<usize>>,
}

impl DepthGuard {
    /// Notes when `parent` is already `limit` levels deep. Counting stops at the limit, so a
    /// check costs at most `limit` steps.
    fn check(&self, parent: &Handle) {
        if self.too_deep.get().is_some() {
            return;
        }
        let mut depth = 0;
        let mut node = Some(parent.clone());
        while let Some(n) = node {
            depth += 1;
            if depth > self.limit {
                self.too_deep.set(Some(self.line.get()));
                return;
            }
            node = n.parent.take().and_then(|weak| {
                let up = weak.upgrade();
                n.parent.set(Some(weak));
                up
            });
        }
    }
}

impl TreeSink for DepthGuard {
    type Output = DepthGuard;
    type Handle = Handle;
    type ElemName<'a>
        = ExpandedName<'a>
    where
        Self: 'a;

    fn finish(self) -> DepthGuard {
        self
    }
    fn parse_error(&self, msg: Cow<'static, str>) {
        self.dom.parse_error(msg)
    }
    fn get_document(&self) -> Handle {
        self.dom.get_document()
    }
    fn elem_name<'a>(&'a self, target: &'a Handle) -> ExpandedName<'a> {
        self.dom.elem_name(target)
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.dom.create_element(name, attrs, flags)
    }
    fn create_comment(&self, text: StrTendril) -> Handle {
        self.dom.create_comment(text)
    }
    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        self.dom.create_pi(target, data)
    }
    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        if matches!(child, NodeOrText::AppendNode(_)) {
            self.check(parent);
        }
        self.dom.append(parent, child)
    }
    fn append_based_on_parent_node(&self, element: &Handle, prev: &Handle, child: NodeOrText<Handle>) {
        self.check(prev);
        self.dom.append_based_on_parent_node(element, prev, child)
    }
    fn append_doctype_to_document(&self, name: StrTendril, public_id: StrTendril, system_id: StrTendril) {
        self.dom.append_doctype_to_document(name, public_id, system_id)
    }
    fn mark_script_already_started(&self, node: &Handle) {
        self.dom.mark_script_already_started(node)
    }
    fn pop(&self, node: &Handle) {
        self.dom.pop(node)
    }
    fn get_template_contents(&self, target: &Handle) -> Handle {
        self.dom.get_template_contents(target)
    }
    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }
    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode)
    }
    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        self.check(sibling);
        self.dom.append_before_sibling(sibling, new_node)
    }
    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        self.dom.add_attrs_if_missing(target, attrs)
    }
    fn associate_with_form(&self, target: &Handle, form: &Handle, nodes: (&Handle, Option<&Handle>)) {
        self.dom.associate_with_form(target, form, nodes)
    }
    fn remove_from_parent(&self, target: &Handle) {
        self.dom.remove_from_parent(target)
    }
    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        self.dom.reparent_children(node, new_parent)
    }
    fn is_mathml_annotation_xml_integration_point(&self, handle: &Handle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }
    fn set_current_line(&self, line_number: u64) {
        self.line.set(usize::try_from(line_number).unwrap_or(usize::MAX));
        self.dom.set_current_line(line_number)
    }
    fn allow_declarative_shadow_roots(&self, intended_parent: &Handle) -> bool {
        self.dom.allow_declarative_shadow_roots(intended_parent)
    }
    fn attach_declarative_shadow(&self, location: &Handle, template: &Handle, attrs: &[Attribute]) -> bool {
        self.dom.attach_declarative_shadow(location, template, attrs)
    }
    fn maybe_clone_an_option_into_selectedcontent(&self, option: &Handle) {
        self.dom.maybe_clone_an_option_into_selectedcontent(option)
    }
}
