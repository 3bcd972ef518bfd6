//! Compare questions ("经济补偿金和赔偿金有什么区别？", "compare Django and Flask"): recognised by
//! their construction and planned as one retrieval per side, so that each side is answered from
//! its own evidence instead of whichever side's words dominate one search (query decomposition,
//! as in multi-hop and comparison question answering).
//!
//! Written by hand: no crate parses comparison constructions in Chinese and English. Only the
//! explicit forms are recognised — a comparison cue (区别, 不同, 异同, compare, difference between,
//! differ) around a list of two to four sides — so an ordinary question with 和/and in it is
//! never split. A question about a quantity ("how much is the difference…", "相差多少") asks for
//! one fact and is left alone.

use regex::Regex;
use std::sync::LazyLock;

/// A compare question's plan: the sides, and what they are compared on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub sides: Vec<String>,
    /// What the sides are compared on ("ORM" in "compare Django and Flask's ORM"), when said.
    pub aspect: Option<String>,
}

impl Comparison {
    /// The query searched for each side: the side, with the aspect when there is one.
    pub fn queries(&self) -> Vec<String> {
        self.sides
            .iter()
            .map(|side| match &self.aspect {
                Some(aspect) => format!("{side} {aspect}"),
                None => side.clone(),
            })
            .collect()
    }
}

const MAX_SIDES: usize = 4;
/// Longer "sides" are clauses, not things compared.
const MAX_SIDE_CHARS: usize = 40;

fn regex(pattern: &str) -> Regex {
    // The patterns are constants of this module; a typo fails every test at once.
    Regex::new(pattern).unwrap_or_else(|e| panic!("compare pattern {pattern}: {e}"))
}

/// 比较/对比(一下) A 和 B (的 X)(的区别)
static ZH_COMPARE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:请|你)?(?:帮我|帮忙)?(?:比较|对比|比一比)(?:一下)?[：:\s]*(?P<body>.+?)(?:的|之间的)?(?:区别|不同|差别|差异|异同|优劣|优缺点)?$",
    )
});
/// A 和 B (之间)(的|有)(什么|哪些)区别(是什么)
static ZH_DIFFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?P<body>.+?)(?:之间)?(?:的|有|存在)?(?:什么|哪些|何|啥|些)?(?:样的)?(?:区别|不同|差别|差异|异同|不一样)(?:是什么|是啥|在哪里|在哪儿|在哪|有哪些|吗|呢)?$",
    )
});
/// (what is) the difference(s) between A and B
static EN_BETWEEN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:(?:what|which)(?:'s| is| are| were| was)\s+|tell me\s+|explain\s+|describe\s+)?(?:the\s+)?(?:main\s+|key\s+|major\s+)?(?:differences?|distinctions?)\s+between\s+(?P<body>.+)$",
    )
});
/// compare A and/with/to B
static EN_COMPARE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)^(?:please\s+|can you\s+|could you\s+)?compare\s+(?P<body>.+)$"));
/// how does X differ between A and B
static EN_DIFFER_BETWEEN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^how\s+(?:does|do|did|is|are)\s+(?P<aspect>.+?)\s+(?:differ|vary)\s+between\s+(?P<body>.+)$")
});
/// how does A differ from B
static EN_DIFFER_FROM: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^how\s+(?:does|do|did|is|are)\s+(?P<a>.+?)\s+(?:differ|different)\s+from\s+(?P<b>.+)$")
});
/// A vs B (the whole question)
static EN_VERSUS: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)^(?P<a>.+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)$"));
/// Sides in an English list: "A and B", "A, B and C", "A with B", "A to B", "A vs B".
static EN_SEPARATOR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\s*,\s*(?:and\s+)?|\s+(?:and|with|to|vs\.?|versus|or)\s+"));
/// A question about a quantity asks for one number, not a comparison.
static QUANTITY: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(?:how\s+(?:much|many|far|long|big|large)|what\s+percentage)\b|多少|几[个天年月倍]|相差|差几")
});

/// The comparison a question asks for, if it is one.
pub fn detect(question: &str) -> Option<Comparison> {
    let text = question.trim().trim_end_matches(['?', '？', '。', '.', '!', '！', ' ']).trim();
    // One question only: a second sentence is a second question, not a side.
    if text.is_empty() || text.contains(['?', '？', '。', '\n']) || QUANTITY.is_match(text) {
        return None;
    }
    let comparison = if let Some(c) = ZH_COMPARE.captures(text).or_else(|| ZH_DIFFERENCE.captures(text)) {
        chinese_sides(&c["body"])
    } else if let Some(c) = EN_DIFFER_BETWEEN.captures(text) {
        english_sides(&c["body"]).map(|sides| Comparison { aspect: Some(c["aspect"].trim().to_string()), ..sides })
    } else if let Some(c) = EN_DIFFER_FROM.captures(text).or_else(|| EN_VERSUS.captures(text)) {
        let sides = vec![strip_article(&c["a"]), strip_article(&c["b"])];
        Some(Comparison { sides, aspect: None })
    } else if let Some(c) = EN_BETWEEN.captures(text).or_else(|| EN_COMPARE.captures(text)) {
        english_sides(&c["body"])
    } else {
        None
    };
    comparison.filter(valid)
}

fn valid(c: &Comparison) -> bool {
    let distinct = c.sides.iter().enumerate().all(|(i, s)| !c.sides[..i].contains(s));
    (2..=MAX_SIDES).contains(&c.sides.len())
        && distinct
        && c.sides.iter().all(|s| !s.is_empty() && s.chars().count() <= MAX_SIDE_CHARS)
}

/// Chinese sides, split at conjunctions that jieba segments as words of their own: 和 in
/// 共和国 or 和解 is part of a word, not a conjunction. "A 和 B 的 X": X is the aspect.
fn chinese_sides(body: &str) -> Option<Comparison> {
    const CONJUNCTIONS: [&str; 8] = ["和", "与", "跟", "同", "及", "以及", "、", "还是"];
    let mut sides: Vec<String> = vec![String::new()];
    for token in skillrag_text::jieba().cut(body, true) {
        let word = token.word;
        let lower = word.trim().to_lowercase();
        let conjunction = CONJUNCTIONS.contains(&word.trim()) || ["vs", "vs.", "versus"].contains(&lower.as_str());
        match sides.last_mut() {
            Some(last) if conjunction && !last.trim().is_empty() => sides.push(String::new()),
            Some(last) => last.push_str(word),
            None => {}
        }
    }
    let mut sides: Vec<String> = sides.iter().map(|s| s.trim().to_string()).collect();
    let mut aspect = None;
    if let Some(last) = sides.last_mut() {
        if let Some((side, what)) = last.rsplit_once('的') {
            if !side.trim().is_empty() && !what.trim().is_empty() {
                aspect = Some(what.trim().to_string());
                *last = side.trim().to_string();
            }
        }
    }
    Some(Comparison { sides, aspect })
}

/// English sides: "A and B", "A, B and C"; "… in/on/for X" after the last side is the aspect.
fn english_sides(body: &str) -> Option<Comparison> {
    let (body, aspect) = match body.rsplit_once(" in terms of ").or_else(|| body.rsplit_once(" when it comes to ")) {
        Some((b, a)) => (b, Some(a.trim().to_string())),
        None => (body, None),
    };
    let sides: Vec<String> = EN_SEPARATOR.split(body).map(strip_article).filter(|s| !s.is_empty()).collect();
    Some(Comparison { sides, aspect })
}

fn strip_article(side: &str) -> String {
    let side = side.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '“' || c == '”');
    let lower = side.to_lowercase();
    for article in ["the ", "a ", "an "] {
        if lower.starts_with(article) {
            return side[article.len()..].trim().to_string();
        }
    }
    side.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sides(q: &str) -> Option<(Vec<String>, Option<String>)> {
        detect(q).map(|c| (c.sides, c.aspect))
    }

    fn two(a: &str, b: &str) -> Option<(Vec<String>, Option<String>)> {
        Some((vec![a.to_string(), b.to_string()], None))
    }

    #[test]
    fn chinese_comparisons_are_split_into_sides() {
        assert_eq!(sides("经济补偿金和赔偿金的差别是什么？"), two("经济补偿金", "赔偿金"));
        assert_eq!(sides("承揽合同和买卖合同有哪些区别？"), two("承揽合同", "买卖合同"));
        assert_eq!(sides("消费保管合同和一般保管合同的区别？"), two("消费保管合同", "一般保管合同"));
        assert_eq!(sides("劳动合同与劳务合同有什么不同"), two("劳动合同", "劳务合同"));
        assert_eq!(
            sides("比较一下 Django 和 Flask 的 ORM"),
            Some((vec!["Django".into(), "Flask".into()], Some("ORM".into())))
        );
        assert_eq!(sides("对比绿茶、白茶和红茶"), Some((vec!["绿茶".into(), "白茶".into(), "红茶".into()], None)));
    }

    #[test]
    fn a_conjunction_inside_a_word_is_not_a_side() {
        assert_eq!(sides("和解协议和调解书有什么区别"), two("和解协议", "调解书"));
        assert_eq!(sides("中华人民共和国劳动法和劳动合同法的区别"), two("中华人民共和国劳动法", "劳动合同法"));
    }

    #[test]
    fn english_comparisons_are_split_into_sides() {
        assert_eq!(sides("What is the difference between a router and a modem?"), two("router", "modem"));
        assert_eq!(sides("Compare Django and Flask"), two("Django", "Flask"));
        assert_eq!(sides("compare the Nimbus with the Stratus"), two("Nimbus", "Stratus"));
        assert_eq!(sides("How does a mesh node differ from a repeater?"), two("mesh node", "repeater"));
        assert_eq!(sides("Wi-Fi 6 vs Wi-Fi 5"), two("Wi-Fi 6", "Wi-Fi 5"));
        assert_eq!(
            sides("How does cell-entry differ between SARS-CoV and MERS-CoV?"),
            Some((vec!["SARS-CoV".into(), "MERS-CoV".into()], Some("cell-entry".into())))
        );
    }

    #[test]
    fn ordinary_questions_are_not_comparisons() {
        for q in [
            "试用期和工资怎么约定？",
            "赫哲语在什么地方比较通行？",
            "How do I reset the router and the extender?",
            "How much is the difference between the human SARS-CoV-2 and the bat RaTG13-CoV?",
            "What is the distance between the p4.7 and p12.7 genes in the Irish versus Japanese strains?",
            "行证许可与登记注册行为有何不同？登记注册行为是行政许可行为吗？",
            "两种茶的水温相差多少度？",
            "区别是什么？",
            "What is the difference?",
        ] {
            assert_eq!(detect(q), None, "{q}");
        }
    }

    #[test]
    fn each_side_is_searched_with_the_aspect() {
        let c = detect("比较一下 Django 和 Flask 的 ORM").unwrap();
        assert_eq!(c.queries(), vec!["Django ORM", "Flask ORM"]);
    }
}
