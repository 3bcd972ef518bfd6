//! Chunking presets by document type. A preset decides where a document may be cut before the
//! size-driven recursive splitter runs: `legal` cuts only at article boundaries (`第X条`,
//! `Article 12`), packing whole neighbouring articles into a chunk, and puts the chapter in the
//! heading path, `faq` keeps each question with its answer,
//! `technical` and `general` cut at headings only (technical documents get larger chunks from
//! the engine). [`detect`] recognizes statute text and question/answer files so that a skill
//! without a configured preset still gets the right one.

use crate::markdown::Section;
use crate::ChunkConfig;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Preset {
    #[default]
    General,
    Faq,
    Legal,
    Technical,
}

/// At least this many article (or question) lines before a document is taken for statute text
/// (or a FAQ) by [`detect`]: one or two could be quotations.
const DETECT_MIN_MARKERS: usize = 3;

/// The preset a document's own structure asks for: `Legal` when it is made of numbered articles,
/// `Faq` when it is made of `Q:`/`问：` blocks, otherwise `None` (keep the configured default).
pub fn detect(text: &str) -> Option<Preset> {
    let mut articles = 0;
    let mut questions = 0;
    for line in text.lines() {
        if article_label(line).is_some() {
            articles += 1;
        } else if is_question_line(line) {
            questions += 1;
        }
        if articles >= DETECT_MIN_MARKERS {
            return Some(Preset::Legal);
        }
    }
    (questions >= DETECT_MIN_MARKERS).then_some(Preset::Faq)
}

/// Applies the preset's cuts to the sections of a document.
pub(crate) fn apply(text: &str, sections: Vec<Section>, preset: Preset, config: &ChunkConfig) -> Vec<Section> {
    match preset {
        Preset::Legal => {
            let articles = sections.into_iter().flat_map(|s| split_articles(text, s, config)).collect();
            pack_articles(text, articles, config)
        }
        Preset::Faq => sections.into_iter().flat_map(|s| split_questions(text, s)).collect(),
        Preset::General | Preset::Technical => sections,
    }
}

/// Lines of `range` with their byte ranges (line break excluded).
fn lines(text: &str, range: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut pos = range.start;
    std::iter::from_fn(move || {
        if pos >= range.end {
            return None;
        }
        let end = text[pos..range.end].find('\n').map_or(range.end, |i| pos + i);
        let line = pos..end;
        pos = end + 1;
        Some(line)
    })
}

/// Sub-sections of `section` restricted to `body`, carrying only the code blocks inside it.
fn sub(section: &Section, heading: Vec<String>, body: Range<usize>) -> Section {
    let code = section.code.iter().filter(|c| c.start >= body.start && c.end <= body.end).cloned().collect();
    Section { heading, body, code }
}

/// One section per article. The chapter lines (`第二章 劳动合同的订立`, `Chapter III`) become
/// heading-path entries instead of text; an article longer than a chunk also gets its own label
/// in the heading path, so that every piece of it still says which article it is.
fn split_articles(text: &str, section: Section, config: &ChunkConfig) -> Vec<Section> {
    let mut out = Vec::new();
    let mut chapters: Vec<(u8, String)> = Vec::new();
    let mut current: Option<(Range<usize>, Option<String>)> = None; // (body, article label)
    let heading_with = |chapters: &[(u8, String)], label: Option<&str>, body: &Range<usize>| {
        let mut h = section.heading.clone();
        h.extend(chapters.iter().map(|(_, t)| t.clone()));
        if let Some(label) = label.filter(|_| text[body.clone()].chars().count() > config.size) {
            h.push(label.to_string());
        }
        h
    };
    let mut flush = |current: &mut Option<(Range<usize>, Option<String>)>, chapters: &[(u8, String)]| {
        if let Some((body, label)) = current.take() {
            if !text[body.clone()].trim().is_empty() {
                let heading = heading_with(chapters, label.as_deref(), &body);
                out.push(sub(&section, heading, body));
            }
        }
    };
    for line in lines(text, section.body.clone()) {
        let s = &text[line.clone()];
        if in_code(&section.code, line.start) {
            extend(&mut current, line);
        } else if let Some((level, title)) = chapter_line(s) {
            flush(&mut current, &chapters);
            chapters.retain(|(l, _)| *l < level);
            chapters.push((level, title));
        } else if let Some(label) = article_label(s) {
            flush(&mut current, &chapters);
            current = Some((line, Some(label)));
        } else {
            extend(&mut current, line);
        }
    }
    flush(&mut current, &chapters);
    out
}

/// Packs neighbouring whole articles of one chapter into a section while they fit in a chunk:
/// an article alone is often one sentence, too little for a question in other words to match,
/// and the neighbours of an article are usually about the same thing. Articles are never cut
/// here; one longer than a chunk stays alone (and is split with its label in the heading).
fn pack_articles(text: &str, articles: Vec<Section>, config: &ChunkConfig) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut out_chars = 0;
    for article in articles {
        let chars = text[article.body.clone()].chars().count();
        if let Some(last) = out.last_mut() {
            let between = text[last.body.end..article.body.start].chars().count();
            if last.heading == article.heading && out_chars + between + chars <= config.size {
                last.body.end = article.body.end;
                last.code.extend(article.code);
                out_chars += between + chars;
                continue;
            }
        }
        out_chars = chars;
        out.push(article);
    }
    out
}

fn extend(current: &mut Option<(Range<usize>, Option<String>)>, line: Range<usize>) {
    match current {
        Some((body, _)) => body.end = line.end,
        None => *current = Some((line, None)),
    }
}

fn in_code(code: &[Range<usize>], at: usize) -> bool {
    code.iter().any(|c| c.start <= at && at < c.end)
}

/// One section per question with its answer.
fn split_questions(text: &str, section: Section) -> Vec<Section> {
    let mut bodies: Vec<Range<usize>> = Vec::new();
    for line in lines(text, section.body.clone()) {
        let s = &text[line.clone()];
        match bodies.last_mut() {
            Some(body) if !is_question_line(s) || in_code(&section.code, line.start) => body.end = line.end,
            _ => bodies.push(line),
        }
    }
    if bodies.len() <= 1 {
        return vec![section];
    }
    bodies.into_iter().map(|b| sub(&section, section.heading.clone(), b)).collect()
}

/// Chinese numerals and digits as they appear in article and chapter numbers.
fn is_number_char(c: char) -> bool {
    c.is_ascii_digit() || ('０'..='９').contains(&c) || "零〇一二三四五六七八九十百千万两".contains(c)
}

/// Markdown emphasis or list markers that may wrap an article label (`**第一条**`).
fn strip_decoration(line: &str) -> &str {
    line.trim_start().trim_start_matches(['*', '_', '#', '>', ' ', '\u{3000}'])
}

/// The label of a line that starts an article, as written: `第三十九条`, `第十条之一`, `第十九條`
/// (Traditional), `Article 12`, `Art. 5`, `Section 3`, `§ 7`.
pub fn article_label(line: &str) -> Option<String> {
    let t = strip_decoration(line);
    // Read in Simplified characters (条 for 條), which keep their byte lengths: the label is then
    // cut from the line as written. Only lines that may start one are converted.
    let simple = if t.starts_with('第') { skillrag_core::simplified(t) } else { String::new() };
    if let Some(rest) = simple.strip_prefix('第') {
        let digits: String = rest.chars().take_while(|&c| is_number_char(c)).collect();
        let after = rest[digits.len()..].strip_prefix('条')?;
        if digits.is_empty() {
            return None;
        }
        let mut after = after;
        if let Some(sub) = after.strip_prefix('之') {
            let n: String = sub.chars().take_while(|&c| is_number_char(c)).collect();
            if !n.is_empty() {
                after = &sub[n.len()..];
            }
        }
        let label = t.get(..simple.len() - after.len())?;
        let after = after.trim_start_matches(['*', '_']);
        let separated = after.is_empty() || after.starts_with(|c: char| c.is_whitespace() || "【（(：:".contains(c));
        return separated.then(|| label.to_string());
    }
    for prefix in ["Article ", "Art. ", "Section ", "§ ", "§"] {
        if let Some(rest) = t.strip_prefix(prefix) {
            let number: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '.').collect();
            let number = number.trim_end_matches('.');
            if number.starts_with(|c: char| c.is_ascii_digit()) && number.len() <= 8 {
                let name = prefix.trim_end();
                return Some(if name == "§" { format!("§ {number}") } else { format!("{name} {number}") });
            }
        }
    }
    None
}

/// A chapter-like heading line with its level: 编 0, 分编 1, 章 2, 节 3 (`Part` 0, `Chapter`
/// 2). Must be short and not a sentence, so that a sentence mentioning "第二章" is not one.
fn chapter_line(line: &str) -> Option<(u8, String)> {
    let t = strip_decoration(line).trim_end();
    if t.chars().count() > 40 || t.ends_with(['。', '；', '.', ';', '，', ',']) {
        return None;
    }
    if let Some(rest) = t.strip_prefix('第') {
        let digits: String = rest.chars().take_while(|&c| is_number_char(c)).collect();
        if digits.is_empty() {
            return None;
        }
        let after = skillrag_core::simplified(&rest[digits.len()..]);
        let after = after.as_str();
        let level = [("分编", 1), ("编", 0), ("章", 2), ("节", 3)]
            .into_iter()
            .find(|(unit, _)| after.starts_with(unit) && separated_heading(&after[unit.len()..]))
            .map(|(_, l)| l)?;
        return Some((level, t.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    for (prefix, level) in [("Part ", 0), ("Title ", 0), ("Chapter ", 2), ("CHAPTER ", 2), ("PART ", 0)] {
        if let Some(rest) = t.strip_prefix(prefix) {
            let number: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            let roman_or_digit = !number.is_empty()
                && (number.chars().all(|c| c.is_ascii_digit()) || number.chars().all(|c| "IVXLCivxlc".contains(c)));
            if roman_or_digit {
                return Some((level, t.to_string()));
            }
        }
    }
    None
}

/// What follows `第二章` in a chapter heading: nothing, or a space and a title.
fn separated_heading(after: &str) -> bool {
    after.is_empty() || after.starts_with(|c: char| c.is_whitespace())
}

/// A line that starts a question: `Q:`, `Question:`, `问：`, `问题：` (or `問：`, `問題：`), after
/// Markdown decoration. Only the label counts, not the shape of the line (`question::is_question`):
/// a FAQ's answers may end with a question mark or open with 如何, and splitting there would cut
/// an answer in two.
pub fn is_question_line(line: &str) -> bool {
    skillrag_core::question::has_question_label(strip_decoration(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_labels() {
        assert_eq!(article_label("第三十九条 劳动者有下列情形之一的").as_deref(), Some("第三十九条"));
        assert_eq!(article_label("**第十条之一**　……").as_deref(), Some("第十条之一"));
        assert_eq!(article_label("第10条【试用期】").as_deref(), Some("第10条"));
        assert_eq!(article_label("第十九條 試用期不得超過六個月。").as_deref(), Some("第十九條"), "Traditional");
        assert_eq!(article_label("第十條之一 ……").as_deref(), Some("第十條之一"));
        assert_eq!(article_label("Article 12. Probation").as_deref(), Some("Article 12"));
        assert_eq!(article_label("§ 7 Scope").as_deref(), Some("§ 7"));
        assert_eq!(article_label("第三十九条规定的情形"), None);
        assert_eq!(article_label("依照第三十九条 处理"), None);
        assert_eq!(article_label("Articles of association"), None);
    }

    #[test]
    fn chapter_lines() {
        assert_eq!(chapter_line("第二章 劳动合同的订立"), Some((2, "第二章 劳动合同的订立".into())));
        assert_eq!(chapter_line("第一节　一般规定"), Some((3, "第一节 一般规定".into())));
        assert_eq!(chapter_line("第一節 一般規定"), Some((3, "第一節 一般規定".into())), "Traditional");
        assert_eq!(chapter_line("第二分編 典型合同"), Some((1, "第二分編 典型合同".into())));
        assert_eq!(chapter_line("Chapter IV Termination"), Some((2, "Chapter IV Termination".into())));
        assert_eq!(chapter_line("第二章规定了劳动合同的订立。"), None);
        assert_eq!(chapter_line("第二章的内容"), None);
    }

    #[test]
    fn detects_statutes_and_faqs() {
        let law = "# 劳动法\n\n第一条 为了保护劳动者。\n\n第二条 适用范围。\n\n第三条 劳动者权利。\n";
        assert_eq!(detect(law), Some(Preset::Legal));
        let faq = "Q: a?\nA: b\n\nQ: c?\nA: d\n\n问：e？\n答：f\n";
        assert_eq!(detect(faq), Some(Preset::Faq));
        assert_eq!(detect("第一条 只有一条。\n普通文本。"), None);
        // The same in Traditional characters.
        let law = "# 勞動基準法\n\n第一條 為規定勞動條件最低標準。\n\n第二條 本法用詞定義。\n\n第三條 本法適用範圍。\n";
        assert_eq!(detect(law), Some(Preset::Legal));
        assert_eq!(detect("問：甲？\n答：乙\n\n問：丙？\n答：丁\n\n問題：戊？\n答：己\n"), Some(Preset::Faq));
    }
}
