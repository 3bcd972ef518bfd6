//! The text analyzer shared by indexing and querying (docs/design.md §3): the same function turns a
//! chunk into index terms and a question into query terms, so they always agree.
//!
//! CJK runs are segmented by jieba in search mode (whole words plus their dictionary sub-words,
//! so 劳动合同法 matches both 劳动合同 and 合同法); other runs are Unicode words, lowercased and
//! Snowball-stemmed for English. Full-width forms are folded (NFKC) and Traditional Chinese
//! characters to Simplified (`skillrag_core::simplified`) first. Function words that carry no content in
//! either language are dropped.

mod stopwords;

use jieba_rs::Jieba;
use rust_stemmers::{Algorithm, Stemmer};
use skillrag_core::{is_han_ideograph, simplified};
use std::collections::HashSet;
use std::sync::OnceLock;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// Bumped whenever [`analyze`] changes output: indexes built with another version are rebuilt.
pub const ANALYZER_VERSION: u32 = 3;

/// A term with its byte offsets in the NFKC-folded text (used by the tantivy adapter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub term: String,
    pub start: usize,
    pub end: usize,
}

/// The process-wide jieba instance; loading its dictionary takes a noticeable fraction of a second.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// jieba's keyword extractor with its general-corpus IDF table.
fn tfidf() -> &'static jieba_rs::TfIdf {
    static TFIDF: OnceLock<jieba_rs::TfIdf> = OnceLock::new();
    TFIDF.get_or_init(jieba_rs::TfIdf::default)
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Index/query terms of `text`, in order (repeats kept: term frequency matters for BM25).
pub fn analyze(text: &str) -> Vec<String> {
    tokens(text).into_iter().map(|t| t.term).collect()
}

/// Like [`analyze`], with offsets.
pub fn tokens(text: &str) -> Vec<Token> {
    tokens_of_runs(text, |_, _| true)
}

/// Which of `wanted` (terms from [`analyze`]) are among the terms of `text`, the same answer as
/// searching `analyze(text)` at a fraction of the cost: a run of text is segmented only when one of
/// the wanted terms could come from it. A jieba token is a substring of its CJK run and runs are
/// cut independently, so a run that contains none of the wanted CJK terms yields none of them.
/// Routing asks this of every retrieved passage for the few terms of a question.
pub fn terms_present<'a>(text: &str, wanted: &'a [String]) -> HashSet<&'a str> {
    let (cjk_wanted, other_wanted): (Vec<&String>, Vec<&String>) =
        wanted.iter().partition(|t| !t.is_empty() && t.chars().all(is_han_ideograph));
    let tokens = tokens_of_runs(text, |run, cjk| {
        if cjk {
            cjk_wanted.iter().any(|t| run.contains(t.as_str()))
        } else {
            !other_wanted.is_empty()
        }
    });
    let found: HashSet<String> = tokens.into_iter().map(|t| t.term).collect();
    wanted.iter().filter(|t| found.contains(t.as_str())).map(String::as_str).collect()
}

/// `text` lowercased, in Simplified characters: the form in which question words and trigger
/// words are compared as strings.
pub fn folded_lower(text: &str) -> String {
    simplified(&text.to_lowercase())
}

/// The tokens of the script runs of NFKC-folded, Simplified `text` for which
/// `analyze_run(run, is_han_ideograph)` holds.
fn tokens_of_runs(text: &str, analyze_run: impl Fn(&str, bool) -> bool) -> Vec<Token> {
    let folded: String = simplified(&text.nfkc().collect::<String>());
    let mut out = Vec::new();
    for (start, run, cjk) in script_runs(&folded) {
        if !analyze_run(run, cjk) {
            continue;
        }
        if cjk {
            for token in jieba().cut_for_search(run, true) {
                let word = token.word;
                if word.chars().all(is_han_ideograph) && !stopwords::is_chinese_stopword(word) {
                    out.push(Token {
                        term: word.to_string(),
                        start: start + token.byte_start,
                        end: start + token.byte_end,
                    });
                }
            }
        } else {
            for (pos, word) in run.unicode_word_indices() {
                let lower = word.to_lowercase();
                if stopwords::is_english_stopword(&lower) {
                    continue;
                }
                let term = if lower.chars().all(|c| c.is_ascii_alphabetic()) {
                    stemmer().stem(&lower).into_owned()
                } else {
                    lower
                };
                out.push(Token { term, start: start + pos, end: start + pos + word.len() });
            }
        }
    }
    out
}

/// Splits text into maximal runs of CJK ideographs and of everything else.
fn script_runs(text: &str) -> Vec<(usize, &str, bool)> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut current: Option<bool> = None;
    for (i, c) in text.char_indices() {
        let cjk = is_han_ideograph(c);
        match current {
            Some(k) if k == cjk => {}
            Some(k) => {
                runs.push((start, &text[start..i], k));
                start = i;
                current = Some(cjk);
            }
            None => current = Some(cjk),
        }
    }
    if let Some(k) = current {
        runs.push((start, &text[start..], k));
    }
    runs
}

/// The most characteristic words of `text` by jieba's TF-IDF (Chinese) or by length and rarity
/// of the analyzed terms otherwise; for query reformulation and keyword display.
pub fn keywords(text: &str, n: usize) -> Vec<String> {
    use jieba_rs::KeywordExtract;
    let mut out: Vec<String> = tfidf()
        .extract_keywords(jieba(), &simplified(text), n, Vec::new())
        .into_iter()
        .map(|k| k.keyword.to_lowercase())
        .collect();
    out.retain(|k| !stopwords::is_english_stopword(k) && !stopwords::is_chinese_stopword(k));
    out
}

/// How rare `word` is in general Chinese: its IDF in jieba's general-corpus table. `None` for
/// anything but a Chinese word of two or more characters, and for words the table lacks or jieba
/// would split.
pub fn general_chinese_idf(word: &str) -> Option<f32> {
    use jieba_rs::KeywordExtract;
    if word.chars().count() < 2 || !word.chars().all(is_han_ideograph) {
        return None;
    }
    // jieba exposes the table only through keyword extraction: one word alone scores its IDF.
    match tfidf().extract_keywords(jieba(), word, 2, Vec::new()).as_slice() {
        [only] if only.keyword == word => Some(only.weight as f32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_present_agrees_with_analyze() {
        let passages = [
            "第十条 建立劳动关系，应当订立书面劳动合同。已建立劳动关系，未同时订立书面劳动合同的，应当自用工之日起一个月内订立。",
            "The incubation period of COVID-19 is 1-14 days; Ｗｉｄｅ forms fold. 劳动者 may resign.",
            "用人单位自用工之日起即与劳动者建立劳动关系。Running runners ran quickly.",
            "",
        ];
        let questions = ["劳动关系什么时候建立？", "incubation periods of covid", "合同法 run 用工 wide 劳动", "天气"];
        for passage in passages {
            let all: HashSet<String> = analyze(passage).into_iter().collect();
            for question in questions {
                let wanted = analyze(question);
                let expected: HashSet<&str> =
                    wanted.iter().filter(|t| all.contains(t.as_str())).map(String::as_str).collect();
                assert_eq!(terms_present(passage, &wanted), expected, "{question} in {passage}");
            }
        }
        assert!(terms_present("劳动关系", &["关系".to_string()]).contains("关系"), "sub-words count");
    }

    #[test]
    fn chinese_search_mode_keeps_words_and_subwords() {
        let terms = analyze("劳动合同法规定了试用期");
        assert!(terms.contains(&"劳动".to_string()), "{terms:?}");
        assert!(terms.contains(&"合同".to_string()), "{terms:?}");
        assert!(terms.contains(&"试用期".to_string()), "{terms:?}");
        assert!(!terms.contains(&"了".to_string()), "stop word kept: {terms:?}");
    }

    #[test]
    fn english_is_lowercased_stemmed_and_stopped() {
        assert_eq!(analyze("The Infections were transmitted"), vec!["infect", "transmit"]);
        assert_eq!(analyze("SARS-CoV-2 R0"), vec!["sar", "cov", "2", "r0"]);
    }

    #[test]
    fn mixed_scripts_and_fullwidth() {
        let terms = analyze("埃菲尔铁塔于１８８９年建成，高324米");
        assert!(terms.contains(&"1889".to_string()), "{terms:?}");
        assert!(terms.contains(&"324".to_string()), "{terms:?}");
        assert!(terms.contains(&"建成".to_string()), "{terms:?}");
    }

    #[test]
    fn same_function_for_index_and_query() {
        let doc = analyze("已建立劳动关系，未同时订立书面劳动合同的");
        let query = analyze("订立书面劳动合同");
        assert!(query.iter().all(|q| doc.contains(q)), "{query:?} not all in {doc:?}");
    }

    #[test]
    fn traditional_and_simplified_chinese_are_one_language() {
        // The same question in both scripts: same terms, function words dropped in both.
        assert_eq!(analyze("勞動者辭職，需要賠償違約金嗎？"), analyze("劳动者辞职，需要赔偿违约金吗？"));
        let traditional = analyze("這個軟體為什麼要更新？");
        assert!(!traditional.iter().any(|t| t == "什麼" || t == "什么" || t == "這個"), "{traditional:?}");
        // A Traditional passage answers a Simplified question, and the other way round.
        let wanted = analyze("维基百科的条目");
        assert_eq!(terms_present("維基百科收錄的條目", &wanted).len(), wanted.len(), "{wanted:?}");
        // Offsets point into the text as written, whatever the script.
        let text = "勞動合同法 law";
        for t in tokens(text) {
            assert_eq!(simplified(&text[t.start..t.end]).to_lowercase(), t.term, "{t:?}");
        }
        assert_eq!(folded_lower("維基百科 Wiki"), "维基百科 wiki");
    }

    #[test]
    fn empty_and_punctuation() {
        assert!(analyze("").is_empty());
        assert!(analyze("？！。,.;").is_empty());
    }

    #[test]
    fn general_idf_ranks_function_words_below_content_words() {
        let function = general_chinese_idf("之间").unwrap();
        let content = general_chinese_idf("试用期").unwrap();
        assert!(function < content, "{function} {content}");
        assert_eq!(general_chinese_idf("字"), None);
        assert_eq!(general_chinese_idf("virus"), None);
    }

    #[test]
    fn extracts_keywords() {
        let k = keywords("用人单位未依法为劳动者缴纳社会保险费的，劳动者可以解除劳动合同", 3);
        assert_eq!(k.len(), 3, "{k:?}");
    }
}
