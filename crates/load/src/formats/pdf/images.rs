//! Image XObjects: measured from their dictionaries, never decoded here.
//!
//! pdf-extract runs the `Do` operator on any XObject as if it were a form: an image's stream is
//! inflated whole and then parsed as page content. A 1.7 MB PDF holding one 1-bit
//! 120000 × 120000 FlateDecode image inflated to 1.8 GB that way (5.3 GB resident), outside
//! every content limit, which counts only page content and forms. Images hold no text layer, so
//! their data is dropped before any page is read ([`strip`]), as is that of any other stream
//! `Do` can reach that is not a form; the size a page's images declare
//! (`/Width`, `/Height`) is kept ([`largest_on_page`]) so that OCR can refuse a page whose image
//! is a bomb before a renderer decodes it.

use pdf_extract::{Dictionary, Document, Object, ObjectId};
use std::collections::HashSet;

/// How deep forms drawing forms are followed when looking for a page's images.
const MAX_FORM_DEPTH: usize = 16;

/// Empties every image, and every stream a page can draw with `Do` that is not a form (whose
/// content the budget counts), so that nothing in this process ever inflates one.
pub(super) fn strip(doc: &mut Document) {
    let drawn = drawable(doc);
    for (id, object) in doc.objects.iter_mut() {
        if let Object::Stream(stream) = object {
            if is_image(&stream.dict) || (drawn.contains(id) && !is_form(&stream.dict)) {
                stream.set_plain_content(Vec::new());
            }
        }
    }
}

/// The streams named in any `/XObject` resource dictionary: what `Do` can reach.
fn drawable(doc: &Document) -> HashSet<ObjectId> {
    let mut drawn = HashSet::new();
    let mut collect = |dict: &Dictionary| {
        let Some(Object::Dictionary(xobjects)) = dict.get(b"XObject").ok().and_then(|o| deref(doc, o)) else { return };
        drawn.extend(xobjects.iter().filter_map(|(_, v)| v.as_reference().ok()));
    };
    for object in doc.objects.values() {
        let dict = match object {
            Object::Dictionary(d) => d,
            Object::Stream(s) => &s.dict,
            _ => continue,
        };
        collect(dict);
        if let Some(Object::Dictionary(resources)) = dict.get(b"Resources").ok().and_then(|o| deref(doc, o)) {
            collect(resources);
        }
    }
    drawn
}

/// The largest image (by declared pixels) page `page_id` draws, directly or through forms:
/// `(width, height)`. Read from the dictionaries only.
pub(super) fn largest_on_page(doc: &Document, page_id: ObjectId) -> Option<(u64, u64)> {
    let (own, inherited) = doc.get_page_resources(page_id).ok()?;
    let mut resources: Vec<&Dictionary> = own.into_iter().collect();
    resources.extend(inherited.into_iter().filter_map(|id| doc.get_dictionary(id).ok()));
    let mut seen = HashSet::new();
    resources.into_iter().filter_map(|r| largest_in(doc, r, &mut seen, 0)).max_by_key(|&(w, h)| w.saturating_mul(h))
}

fn largest_in(
    doc: &Document,
    resources: &Dictionary,
    seen: &mut HashSet<ObjectId>,
    depth: usize,
) -> Option<(u64, u64)> {
    if depth > MAX_FORM_DEPTH {
        return None;
    }
    let xobjects = deref(doc, resources.get(b"XObject").ok()?)?.as_dict().ok()?;
    let mut largest: Option<(u64, u64)> = None;
    for (_, value) in xobjects.iter() {
        let Object::Reference(id) = value else { continue };
        if !seen.insert(*id) {
            continue;
        }
        let Ok(Object::Stream(stream)) = doc.get_object(*id) else { continue };
        let found = if is_image(&stream.dict) {
            let dimension = |key: &[u8]| {
                stream
                    .dict
                    .get(key)
                    .ok()
                    .and_then(|o| deref(doc, o))
                    .and_then(|o| o.as_i64().ok())
                    .map(|v| v.max(0) as u64)
            };
            Some((dimension(b"Width").unwrap_or(0), dimension(b"Height").unwrap_or(0)))
        } else {
            let inner = stream.dict.get(b"Resources").ok().and_then(|o| deref(doc, o)).and_then(|o| o.as_dict().ok());
            inner.and_then(|r| largest_in(doc, r, seen, depth + 1))
        };
        if let Some((w, h)) = found {
            if largest.is_none_or(|(lw, lh)| w.saturating_mul(h) > lw.saturating_mul(lh)) {
                largest = Some((w, h));
            }
        }
    }
    largest
}

fn deref<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Object> {
    doc.dereference(object).ok().map(|(_, o)| o)
}

fn is_form(dict: &Dictionary) -> bool {
    dict.get(b"Subtype").and_then(Object::as_name).is_ok_and(|s| s == b"Form")
}

fn is_image(dict: &Dictionary) -> bool {
    dict.get(b"Subtype").and_then(Object::as_name).is_ok_and(|s| s == b"Image")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::{dictionary, Stream};

    #[test]
    fn images_and_other_drawn_streams_are_emptied_and_forms_kept() {
        let mut doc = Document::with_version("1.5");
        let image = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 120_000, "Height" => 90_000 },
            vec![0; 64],
        ));
        // No subtype: pdf-extract would run it as content all the same.
        let odd = doc.add_object(Stream::new(dictionary! { "Type" => "XObject" }, b"BT ET".to_vec()));
        let form = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form",
            "Resources" => dictionary! { "XObject" => dictionary! { "Im1" => image } } },
            b"/Im1 Do".to_vec(),
        ));
        let pages_id = doc.new_object_id();
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id,
            "Resources" => dictionary! { "XObject" => dictionary! { "F1" => form, "X1" => odd } },
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1 }),
        );
        assert_eq!(largest_on_page(&doc, page), Some((120_000, 90_000)), "found through the form");
        strip(&mut doc);
        let content = |id| doc.get_object(id).unwrap().as_stream().unwrap().content.clone();
        assert!(content(image).is_empty() && content(odd).is_empty());
        assert_eq!(content(form), b"/Im1 Do");
    }
}
