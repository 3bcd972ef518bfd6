//! Page content checked before pdf-extract reads it.
//!
//! pdf-extract unwraps on the operands of the operators it handles: `12 12 Tf` (a number where
//! a font name goes) panics with "called `Result::unwrap()` on an `Err` value", `Td` with one
//! operand fails an assertion, `Tj` before any `Tf` unwraps a missing font. The panic is
//! contained, but its text says nothing to the user. So each page's content is decoded here
//! first and an operation pdf-extract would choke on is named with what it needed; anything
//! that still panics is described without the panic's own words ([`describe_panic`]).

use pdf_extract::content::Content;
use pdf_extract::{Document, Object, ObjectId};

#[derive(Clone, Copy)]
enum Arg {
    Number,
    Name,
    Text,
    Array,
}

/// The operands pdf-extract reads of an operator, and whether it asserts their exact count.
fn shape(operator: &str) -> Option<(&'static [Arg], bool)> {
    use Arg::*;
    Some(match operator {
        "cm" | "Tm" => (&[Number; 6], true),
        "c" => (&[Number; 6], false),
        "Td" | "TD" => (&[Number; 2], true),
        "m" | "l" => (&[Number; 2], false),
        "v" | "y" | "re" => (&[Number; 4], false),
        "CS" | "cs" | "gs" | "Do" => (&[Name], false),
        "Tf" => (&[Name, Number], false),
        "Tc" | "Tw" | "Tz" | "TL" | "Ts" | "w" => (&[Number], false),
        "TJ" => (&[Array], false),
        "Tj" => (&[Text], false),
        _ => return None,
    })
}

/// Why page `page_id`'s content would make pdf-extract panic, if it would for a reason
/// checked here: the first such operation, numbered from 1, with what it needed.
pub(super) fn check_page(doc: &Document, page_id: ObjectId) -> Result<(), String> {
    // Content that does not even decode is left to pdf-extract, which reports it itself.
    let Ok(bytes) = doc.get_page_content(page_id) else { return Ok(()) };
    let Ok(content) = Content::decode(&bytes) else { return Ok(()) };
    // Whether a font is set, per graphics state saved by `q` (pdf-extract unwraps it in `Tj`).
    let mut font = vec![false];
    for (i, op) in content.operations.iter().enumerate() {
        let operator = op.operator.as_str();
        if let Some((args, exact)) = shape(operator) {
            let fits = if exact { op.operands.len() == args.len() } else { op.operands.len() >= args.len() };
            if !fits || !args.iter().zip(&op.operands).all(|(arg, o)| matches(*arg, o)) {
                return Err(format!(
                    "malformed content: operation {} `{operator}` needs {}, found {}",
                    i + 1,
                    needs(args),
                    found(&op.operands)
                ));
            }
        }
        match operator {
            "q" => font.push(font.last().copied().unwrap_or(false)),
            "Q" if font.len() > 1 => {
                font.pop();
            }
            "Tf" => {
                if let Some(set) = font.last_mut() {
                    *set = true;
                }
            }
            "Tj" | "TJ" if !font.last().copied().unwrap_or(false) => {
                let shows = matches!(op.operands.first(), Some(Object::String(..)))
                    || matches!(op.operands.first(), Some(Object::Array(a)) if a.iter().any(|e| matches!(e, Object::String(..))));
                if shows {
                    return Err(format!(
                        "malformed content: operation {} `{operator}` shows text before any font is set (`Tf`)",
                        i + 1
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn matches(arg: Arg, object: &Object) -> bool {
    match arg {
        Arg::Number => matches!(object, Object::Integer(_) | Object::Real(_)),
        Arg::Name => matches!(object, Object::Name(_)),
        Arg::Text => matches!(object, Object::String(..)),
        Arg::Array => matches!(object, Object::Array(_)),
    }
}

fn needs(args: &[Arg]) -> String {
    let name = |a: &Arg| match a {
        Arg::Number => "a number",
        Arg::Name => "a name",
        Arg::Text => "a string",
        Arg::Array => "an array",
    };
    match args {
        [Arg::Name, Arg::Number] => "a font name and a size".into(),
        [one] => name(one).into(),
        all => format!("{} numbers", all.len()),
    }
}

fn found(operands: &[Object]) -> String {
    if operands.is_empty() {
        return "no operands".into();
    }
    let kinds: Vec<&str> = operands
        .iter()
        .take(8)
        .map(|o| match o {
            Object::Integer(_) | Object::Real(_) => "number",
            Object::Name(_) => "name",
            Object::String(..) => "string",
            Object::Array(_) => "array",
            Object::Dictionary(_) => "dictionary",
            Object::Boolean(_) => "boolean",
            Object::Null => "null",
            _ => "object",
        })
        .collect();
    let more = if operands.len() > kinds.len() { ", …" } else { "" };
    format!("{} operand(s): {}{more}", operands.len(), kinds.join(", "))
}

/// What to tell the user when pdf-extract or lopdf panicked anyway: the panic's own text
/// ("called `Option::unwrap()` on a `None` value") means nothing to them. A one-word message is
/// the resource pdf-extract looked up and did not find (`XObject`, `ColorSpace`).
pub(super) fn describe_panic(message: &str) -> String {
    if !message.is_empty() && message.len() <= 32 && message.chars().all(|c| c.is_ascii_alphanumeric()) {
        return format!("the PDF parser stopped: a /{message} resource the content uses is missing or malformed");
    }
    "the PDF parser stopped on content it cannot read (an operator with operands of the wrong kind, or a missing resource)".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::{dictionary, Stream};

    /// A one-page document whose page content is `content`; the page's id.
    fn page_with(content: &[u8]) -> (Document, ObjectId) {
        let mut doc = Document::with_version("1.5");
        let contents = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
        let pages_id = doc.new_object_id();
        let page = doc.add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => contents });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1 }),
        );
        (doc, page)
    }

    fn check(content: &[u8]) -> Result<(), String> {
        let (doc, page) = page_with(content);
        check_page(&doc, page)
    }

    #[test]
    fn operands_pdf_extract_unwraps_on_are_named() {
        assert_eq!(check(b"BT /F1 12 Tf 72 720 Td (hello) Tj [(a) 5 (b)] TJ ET q 1 0 0 1 0 0 cm Q"), Ok(()));
        assert_eq!(
            check(b"BT 12 12 Tf ET").unwrap_err(),
            "malformed content: operation 2 `Tf` needs a font name and a size, found 2 operand(s): number, number"
        );
        assert!(check(b"1 0 0 1 0 cm").unwrap_err().contains("`cm` needs 6 numbers, found 5 operand(s)"));
        assert!(check(b"BT /F1 12 Tf 5 Tj ET").unwrap_err().contains("`Tj` needs a string"));
        assert!(check(b"BT /F1 12 Tf Td ET").unwrap_err().contains("`Td` needs 2 numbers, found no operands"));
        // The font is part of the graphics state: `Q` takes back a `Tf` made after `q`.
        assert!(check(b"q BT /F1 12 Tf ET Q BT (x) Tj ET").unwrap_err().contains("before any font is set"));
        assert_eq!(check(b"BT /F1 12 Tf q Q (x) Tj ET"), Ok(()));
        // TJ with only spacing shows nothing, so needs no font.
        assert_eq!(check(b"BT [5 10] TJ ET"), Ok(()));
    }

    #[test]
    fn panics_are_described_without_their_own_words() {
        assert_eq!(
            describe_panic("XObject"),
            "the PDF parser stopped: a /XObject resource the content uses is missing or malformed"
        );
        let message = describe_panic("called `Result::unwrap()` on an `Err` value: ObjectType");
        assert!(!message.contains("unwrap") && message.contains("cannot read"), "{message}");
    }
}
