//! FAQ tables: CSV, TSV, JSON and JSONL with question/answer columns.
//!
//! The question and answer columns (or keys) are found by name, case-insensitively, in English or
//! Chinese (`question`/`answer`, `q`/`a`, `问题`/`答案`…). Each row becomes a [`QaPair`] with the
//! line it came from, and the text of the file is the pairs written as `Q: …\nA: …` blocks.
//! A ragged CSV row or broken JSON rejects the whole file with the line to fix; rows whose question
//! or answer is empty are skipped.
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use super::{ExtractError, Extracted, QaPair};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaqFormat {
    Csv,
    Tsv,
    Json,
    Jsonl,
}

impl FaqFormat {
    /// The FAQ format of a file extension (`csv`, `tsv`/`tab`, `json`, `jsonl`/`ndjson`), any case.
    pub fn from_extension(ext: &str) -> Option<FaqFormat> {
        match ext.to_ascii_lowercase().as_str() {
            "csv" => Some(FaqFormat::Csv),
            "tsv" | "tab" => Some(FaqFormat::Tsv),
            "json" => Some(FaqFormat::Json),
            "jsonl" | "ndjson" => Some(FaqFormat::Jsonl),
            _ => None,
        }
    }
}

/// Column names of the question, most specific first.
const QUESTION_NAMES: [&str; 8] = ["question", "问题", "标准问题", "q", "问", "提问", "query", "title"];
/// Column names of the answer, most specific first.
const ANSWER_NAMES: [&str; 9] = ["answer", "答案", "a", "答", "回答", "reply", "response", "回复", "content"];
/// Keys under which a JSON object may hold its array of entries.
const ARRAY_KEYS: [&str; 9] = ["faq", "faqs", "items", "data", "questions", "qa", "entries", "records", "list"];

pub fn extract_faq(text: &str, format: FaqFormat) -> Result<Extracted, ExtractError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // csv counts lines by `\n` only; CRLF and lone CR files would report wrong lines.
    let text = if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text.to_string() };
    let text = text.as_str();
    let faq = match format {
        FaqFormat::Csv => from_delimited(text, b',')?,
        FaqFormat::Tsv => from_delimited(text, b'\t')?,
        FaqFormat::Json => from_json(text)?,
        FaqFormat::Jsonl => from_jsonl(text)?,
    };
    let text = faq.iter().map(|p| format!("Q: {}\nA: {}", p.question, p.answer)).collect::<Vec<_>>().join("\n\n");
    Ok(Extracted { text, markdown: false, faq, ..Default::default() })
}

/// NFC, `\n` line endings, no control characters but `\n`/`\t`, trimmed.
fn clean(value: &str) -> String {
    let value: String = value
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .nfc()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect();
    value.trim().to_string()
}

/// The canonical form of a header for matching: trimmed, lowercase, without a trailing colon.
fn header_key(header: &str) -> String {
    header.trim().trim_end_matches([':', '：']).trim().to_lowercase()
}

/// The index of the best-matching header among `headers` for one of `names`.
fn find_column<'a>(headers: impl Iterator<Item = &'a str> + Clone, names: &[&str]) -> Option<usize> {
    names.iter().find_map(|name| headers.clone().position(|h| header_key(h) == *name))
}

fn listed(headers: impl Iterator<Item = impl AsRef<str>>) -> String {
    let found: Vec<String> = headers.map(|h| format!("`{}`", h.as_ref().trim())).collect();
    if found.is_empty() {
        "no headers".to_string()
    } else {
        found.join(", ")
    }
}

fn pair(question: &str, answer: &str, line: usize) -> Option<QaPair> {
    let (question, answer) = (clean(question), clean(answer));
    (!question.is_empty() && !answer.is_empty()).then_some(QaPair { question, answer, line })
}

fn from_delimited(text: &str, delimiter: u8) -> Result<Vec<QaPair>, ExtractError> {
    let mut reader =
        csv::ReaderBuilder::new().delimiter(delimiter).has_headers(true).flexible(true).from_reader(text.as_bytes());
    let csv_error = |e: csv::Error| {
        let line = e.position().map_or(0, |p| LineCounter::new(text).line_at(p.byte() as usize));
        ExtractError::Malformed { line, reason: format!("cannot read the table ({e}); check its quoting") }
    };
    let headers = reader.headers().map_err(csv_error)?.clone();
    let (Some(q), Some(a)) = (find_column(headers.iter(), &QUESTION_NAMES), find_column(headers.iter(), &ANSWER_NAMES))
    else {
        return Err(ExtractError::NoQaColumns { found: listed(headers.iter()) });
    };
    let mut pairs = Vec::new();
    let mut record = csv::StringRecord::new();
    // csv's own line numbers skip blank lines; count them from the record's byte offset instead.
    let mut lines = LineCounter::new(text);
    while reader.read_record(&mut record).map_err(csv_error)? {
        let line = lines.line_at(record.position().map_or(0, |p| p.byte() as usize));
        if record.len() != headers.len() {
            // A lone empty field is a blank line with spaces: skip it.
            if record.len() == 1 && record[0].trim().is_empty() {
                continue;
            }
            return Err(ExtractError::RaggedRow { line, expected: headers.len(), found: record.len() });
        }
        pairs.extend(pair(&record[q], &record[a], line));
    }
    Ok(pairs)
}

/// 1-based line numbers of ascending byte offsets, counted incrementally.
struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        LineCounter { text: text.as_bytes(), offset: 0, line: 1 }
    }

    /// The line where the record at `offset` starts (blank lines before it are not its start).
    fn line_at(&mut self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while self.text.get(offset) == Some(&b'\n') {
            offset += 1;
        }
        if offset >= self.offset {
            self.line += self.text[self.offset..offset].iter().filter(|&&b| b == b'\n').count();
            self.offset = offset;
        }
        self.line
    }
}

/// A JSON error as `Malformed` at its line, without serde_json's own "at line … column …".
fn json_error(e: serde_json::Error, line_offset: usize) -> ExtractError {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message).to_string();
    let line = if e.line() == 0 { line_offset.max(1) } else { e.line() + line_offset.saturating_sub(1) };
    ExtractError::Malformed { line, reason: format!("invalid JSON: {message} (column {})", e.column()) }
}

/// A value as answer/question text: strings as they are, numbers and booleans written out, arrays
/// of strings one per line; objects and null say nothing.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => {
            items.iter().map(value_text).filter(|s| !s.trim().is_empty()).collect::<Vec<_>>().join("\n")
        }
        Value::Null | Value::Object(_) => String::new(),
    }
}

/// The pair in one JSON object, by key name; `None` when it has no question or answer key.
fn object_pair(object: &serde_json::Map<String, Value>, line: usize) -> Option<Result<QaPair, ()>> {
    let q = find_column(object.keys().map(String::as_str), &QUESTION_NAMES)?;
    let a = find_column(object.keys().map(String::as_str), &ANSWER_NAMES)?;
    let question = object.values().nth(q).map(value_text).unwrap_or_default();
    let answer = object.values().nth(a).map(value_text).unwrap_or_default();
    Some(pair(&question, &answer, line).ok_or(()))
}

fn from_json(text: &str) -> Result<Vec<QaPair>, ExtractError> {
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(e, 1))?;
    let entries: Vec<Value> = match value {
        Value::Array(items) => items,
        Value::Object(mut object) => {
            let key = object
                .keys()
                .find(|k| ARRAY_KEYS.contains(&header_key(k).as_str()) && object[*k].is_array())
                .or_else(|| {
                    // Any single array of objects, whatever its key.
                    let arrays: Vec<&String> = object
                        .iter()
                        .filter(|(_, v)| v.as_array().is_some_and(|a| a.iter().any(Value::is_object)))
                        .map(|(k, _)| k)
                        .collect();
                    (arrays.len() == 1).then(|| arrays[0])
                })
                .cloned();
            match key.and_then(|k| object.remove(&k)) {
                Some(Value::Array(items)) => items,
                // A single question/answer object.
                _ => vec![Value::Object(object)],
            }
        }
        _ => {
            return Err(ExtractError::Malformed {
                line: 1,
                reason: "expected an array of question/answer objects, or an object holding one under \
                         `faq`, `items`, `data` or `questions`"
                    .to_string(),
            })
        }
    };
    pairs_from_objects(entries.iter().enumerate().map(|(i, v)| (i + 1, v)))
}

fn from_jsonl(text: &str) -> Result<Vec<QaPair>, ExtractError> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| json_error(e, i + 1))?;
        if !value.is_object() {
            return Err(ExtractError::Malformed {
                line: i + 1,
                reason: "expected one JSON object per line, such as {\"question\": …, \"answer\": …}".to_string(),
            });
        }
        entries.push((i + 1, value));
    }
    pairs_from_objects(entries.iter().map(|(line, v)| (*line, v)))
}

/// Pairs from JSON objects; `NoQaColumns` when no object has both a question and an answer key.
fn pairs_from_objects<'a>(entries: impl Iterator<Item = (usize, &'a Value)>) -> Result<Vec<QaPair>, ExtractError> {
    let mut pairs = Vec::new();
    let mut matched = false;
    let mut keys: Vec<String> = Vec::new();
    let mut objects = 0;
    for (line, value) in entries {
        let Some(object) = value.as_object() else { continue };
        objects += 1;
        match object_pair(object, line) {
            Some(Ok(p)) => {
                matched = true;
                pairs.push(p);
            }
            Some(Err(())) => matched = true,
            None => {
                for k in object.keys() {
                    if !keys.contains(k) && keys.len() < 20 {
                        keys.push(k.clone());
                    }
                }
            }
        }
    }
    if !matched && objects > 0 {
        return Err(ExtractError::NoQaColumns { found: listed(keys.iter()) });
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qa(question: &str, answer: &str, line: usize) -> QaPair {
        QaPair { question: question.into(), answer: answer.into(), line }
    }

    #[test]
    fn csv_with_quoted_commas_and_newlines() {
        let csv = "id,Question,Answer\n1,How do I reset my password?,\"Open Settings, then Security.\"\n\
                   2,\"Where are invoices?\",\"Under Billing.\nOlder ones: email us.\"\n3,,no question\n4,Refunds?,\"She said \"\"30 days\"\".\"\n";
        let out = extract_faq(csv, FaqFormat::Csv).unwrap();
        assert_eq!(
            out.faq,
            vec![
                qa("How do I reset my password?", "Open Settings, then Security.", 2),
                qa("Where are invoices?", "Under Billing.\nOlder ones: email us.", 3),
                qa("Refunds?", "She said \"30 days\".", 6),
            ]
        );
        assert!(!out.markdown);
        assert_eq!(out.title, None);
        assert_eq!(
            out.text,
            "Q: How do I reset my password?\nA: Open Settings, then Security.\n\n\
             Q: Where are invoices?\nA: Under Billing.\nOlder ones: email us.\n\nQ: Refunds?\nA: She said \"30 days\"."
        );
    }

    #[test]
    fn chinese_headers_tsv_and_crlf() {
        let tsv = "标准问题\t答案\t分类\r\n年假有几天？\t每年15天。\t休假\r\n\r\n病假怎么请？\t提交病假单。\t休假\r\n";
        let out = extract_faq(tsv, FaqFormat::Tsv).unwrap();
        assert_eq!(out.faq, vec![qa("年假有几天？", "每年15天。", 2), qa("病假怎么请？", "提交病假单。", 4)]);
        let csv = "\u{feff}问,答\n什么是RAG?,检索增强生成。\n";
        assert_eq!(extract_faq(csv, FaqFormat::Csv).unwrap().faq, vec![qa("什么是RAG?", "检索增强生成。", 2)]);
        // Header matching is case-insensitive and prefers the most specific column.
        let csv = "Title,QUESTION,Content,ANSWER\nt,q1,c,a1\n";
        assert_eq!(extract_faq(csv, FaqFormat::Csv).unwrap().faq, vec![qa("q1", "a1", 2)]);
    }

    #[test]
    fn ragged_rows_reject_the_file() {
        let csv = "question,answer\nq1,a1\nq2,a2,extra\n";
        assert_eq!(
            extract_faq(csv, FaqFormat::Csv).unwrap_err(),
            ExtractError::RaggedRow { line: 3, expected: 2, found: 3 }
        );
        let csv = "question,answer\n\"multi\nline\",a1\nonly-one-field\n";
        let err = extract_faq(csv, FaqFormat::Csv).unwrap_err();
        assert_eq!(err, ExtractError::RaggedRow { line: 4, expected: 2, found: 1 });
        assert_eq!(err.to_string(), "line 4: expected 2 fields, found 1");
    }

    #[test]
    fn missing_columns_are_named() {
        let err = extract_faq("id,text\n1,hello\n", FaqFormat::Csv).unwrap_err();
        assert_eq!(err, ExtractError::NoQaColumns { found: "`id`, `text`".into() });
        assert!(err.to_string().contains("found `id`, `text`"));
        let err = extract_faq("question,notes\nq,n\n", FaqFormat::Csv).unwrap_err();
        assert!(matches!(err, ExtractError::NoQaColumns { .. }));
        let err = extract_faq(r#"[{"prompt": "x", "completion": "y"}]"#, FaqFormat::Json).unwrap_err();
        // (Key order depends on serde_json's `preserve_order` feature.)
        assert!(
            matches!(&err, ExtractError::NoQaColumns { found } if found.contains("`prompt`") && found.contains("`completion`"))
        );
        assert_eq!(
            extract_faq("", FaqFormat::Csv).unwrap_err(),
            ExtractError::NoQaColumns { found: "no headers".into() }
        );
    }

    #[test]
    fn json_shapes() {
        let array = r#"[{"Question": "Q1", "Answer": "A1"}, {"question": "", "answer": "skipped"}, 7,
                        {"q": "Q3", "a": ["step 1", "step 2"]}]"#;
        let out = extract_faq(array, FaqFormat::Json).unwrap();
        assert_eq!(out.faq, vec![qa("Q1", "A1", 1), qa("Q3", "step 1\nstep 2", 4)]);

        let wrapped = r#"{"version": 2, "FAQ": [{"问题": "问一", "回答": "答一"}]}"#;
        assert_eq!(extract_faq(wrapped, FaqFormat::Json).unwrap().faq, vec![qa("问一", "答一", 1)]);
        let any_key = r#"{"meta": {}, "pairs": [{"query": "x?", "response": 42}]}"#;
        assert_eq!(extract_faq(any_key, FaqFormat::Json).unwrap().faq, vec![qa("x?", "42", 1)]);
        let single = r#"{"question": "only?", "answer": "one"}"#;
        assert_eq!(extract_faq(single, FaqFormat::Json).unwrap().faq, vec![qa("only?", "one", 1)]);
        assert!(matches!(
            extract_faq("\"text\"", FaqFormat::Json).unwrap_err(),
            ExtractError::Malformed { line: 1, .. }
        ));
    }

    #[test]
    fn bad_json_says_where() {
        let err = extract_faq("[\n  {\"question\": \"a\",\n   \"answer\": }\n]", FaqFormat::Json).unwrap_err();
        match &err {
            ExtractError::Malformed { line: 3, reason } => assert!(reason.starts_with("invalid JSON: "), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert!(!err.to_string().contains("at line"), "{err}");
    }

    #[test]
    fn jsonl() {
        let jsonl = "{\"question\": \"Q1\", \"answer\": \"A1\"}\n\n{\"question\": \"Q2\", \"answer\": \"A2\"}\n";
        assert_eq!(extract_faq(jsonl, FaqFormat::Jsonl).unwrap().faq, vec![qa("Q1", "A1", 1), qa("Q2", "A2", 3)]);
        let err = extract_faq("{\"question\": \"Q1\", \"answer\": \"A1\"}\n{\"question\": \"Q2\"", FaqFormat::Jsonl)
            .unwrap_err();
        assert!(matches!(err, ExtractError::Malformed { line: 2, .. }), "{err:?}");
        let err = extract_faq("[1, 2]\n", FaqFormat::Jsonl).unwrap_err();
        assert!(matches!(err, ExtractError::Malformed { line: 1, .. }), "{err:?}");
        let err = extract_faq("{\"id\": 1}\n", FaqFormat::Jsonl).unwrap_err();
        assert_eq!(err, ExtractError::NoQaColumns { found: "`id`".into() });
    }

    #[test]
    fn values_are_nfc_and_trimmed() {
        let csv = "question,answer\n  Cafe\u{301}?  ,\" yes \"\n";
        assert_eq!(extract_faq(csv, FaqFormat::Csv).unwrap().faq, vec![qa("Café?", "yes", 2)]);
    }

    fn testdata(name: &str) -> String {
        let path = format!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/documents/{}"), name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e} (made by scripts/make-test-documents)"))
    }

    #[test]
    fn faq_files_from_testdata() {
        let reset = "Hold the reset pin for 10 seconds, until the LED blinks amber.";
        for (name, format, lines) in [
            ("faq.csv", FaqFormat::Csv, [2, 4, 5, 6]),
            ("faq.tsv", FaqFormat::Tsv, [2, 3, 4, 5]),
            ("faq.json", FaqFormat::Json, [1, 2, 3, 4]),
            ("faq.jsonl", FaqFormat::Jsonl, [1, 2, 3, 4]),
        ] {
            let out = extract_faq(&testdata(name), format).unwrap();
            assert_eq!(out.faq.iter().map(|p| p.line).collect::<Vec<_>>(), lines, "{name}");
            assert_eq!(out.faq[0].question, "How do I reset the router?", "{name}");
            assert!(out.faq[0].answer.starts_with(reset), "{name}");
            assert!(out.faq[0].answer.ends_with("All settings, including passwords, are erased."), "{name}");
            assert_eq!(
                out.faq[2].answer,
                "Yes: add it from the app, under \"Mesh\", and keep it within two rooms of the main router."
            );
            assert_eq!(out.faq[3].question, "路由器多久自动更新一次固件？", "{name}");
            assert!(out.text.starts_with(&format!("Q: How do I reset the router?\nA: {reset}")), "{name}");
        }
        let zh = extract_faq(&testdata("faq-zh.csv"), FaqFormat::Csv).unwrap();
        assert_eq!(zh.faq.len(), 3);
        assert_eq!(zh.faq[0].question, "如何恢复出厂设置？");
        assert_eq!(
            zh.faq[0].answer,
            "用回形针按住 Reset 孔 10 秒，直到指示灯闪烁琥珀色。\n所有设置（包括密码）都会被清除。"
        );
        assert_eq!(zh.faq[1].line, 4);
        assert_eq!(
            extract_faq(&testdata("ragged.csv"), FaqFormat::Csv).unwrap_err(),
            ExtractError::RaggedRow { line: 3, expected: 2, found: 3 }
        );
    }

    #[test]
    fn extensions() {
        assert_eq!(FaqFormat::from_extension("CSV"), Some(FaqFormat::Csv));
        assert_eq!(FaqFormat::from_extension("ndjson"), Some(FaqFormat::Jsonl));
        assert_eq!(FaqFormat::from_extension("md"), None);
    }
}
