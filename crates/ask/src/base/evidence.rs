//! How much of a question a text answers: the BM25-weighted share of the question's terms the
//! text contains. One scale for every skill, so skills and chunks can be compared and a fitted
//! threshold means the same thing everywhere.
//!
//! Written here rather than taken from tantivy's BM25 score because that score is unbounded and
//! depends on each skill's own statistics; this one uses IDF over *all* skills' knowledge and
//! lies in [0, 1] (1 = every informative word of the question is in the text).

use skillrag_store::{SkillIndex, StoreError};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A skill's id with its open index.
pub type NamedIndex = (String, Arc<dyn SkillIndex>);

/// Document frequencies of a question's terms across every skill's chunks.
#[derive(Debug, Clone, Default)]
pub struct TermStats {
    docs: f64,
    df: HashMap<String, u64>,
    /// Per skill, how many chunks contain each term.
    known: HashMap<String, HashMap<String, u64>>,
    /// Per skill, its number of chunks.
    chunks: HashMap<String, f64>,
    /// Share of general Chinese documents that contain each Chinese word (jieba's IDF table).
    general: HashMap<String, f64>,
    /// The question's phrases counted here ([`phrase_key`]s), once for every skill's score.
    phrases: Vec<String>,
}

impl TermStats {
    /// Collects the statistics of `terms` over every skill's index (so IDF is project-wide).
    pub fn collect(indexes: &[NamedIndex], terms: &[String]) -> Result<TermStats, StoreError> {
        let unique: Vec<String> = unique(terms);
        let mut per_skill = HashMap::new();
        for (skill, index) in indexes {
            let counts: HashMap<String, u64> = unique.iter().cloned().zip(index.doc_freqs(&unique)?).collect();
            per_skill.insert(skill.clone(), (index.len() as u64, counts));
        }
        Ok(TermStats::from_counts(per_skill, &unique))
    }

    /// Adds the counts of the question's phrases ([`phrases`], kept under their [`phrase_key`])
    /// in `indexes`: the shortlisted skills, whose ranking they refine (the shortlist is chosen on
    /// words; a phrase query costs more than a word's count). A skill is only asked for the
    /// phrases whose two words it holds, and an index without positions answers none.
    pub fn add_phrases(&mut self, indexes: &[NamedIndex], terms: &[String]) -> Result<(), StoreError> {
        let pairs = phrases(terms);
        self.phrases = pairs.iter().map(|(a, b)| phrase_key(a, b)).collect();
        for (skill, index) in indexes {
            let Some(known) = self.known.get_mut(skill) else { continue };
            let present = |t: &String| known.get(t).is_some_and(|&n| n > 0);
            let wanted: Vec<(String, String)> =
                pairs.iter().filter(|(a, b)| present(a) && present(b)).cloned().collect();
            if wanted.is_empty() {
                continue;
            }
            let Some(found) = index.phrase_doc_freqs(&wanted)? else { continue };
            for ((a, b), n) in wanted.iter().zip(found) {
                let key = phrase_key(a, b);
                known.insert(key.clone(), n);
                *self.df.entry(key).or_default() += n;
            }
        }
        Ok(())
    }

    /// The question's phrases that some skill's knowledge contains: the ones that say something
    /// about a skill ([`crate::stages::route::selection::specificity`]).
    pub fn phrases_found(&self) -> impl Iterator<Item = &String> {
        self.phrases.iter().filter(|k| self.occurs(k))
    }

    /// Whether any skill's knowledge contains `term` (a word or a [`phrase_key`]).
    pub fn occurs(&self, term: &str) -> bool {
        self.df.get(term).is_some_and(|&n| n > 0)
    }

    /// The statistics from each skill's chunk count and the chunk counts of `terms`.
    pub fn from_counts(per_skill: HashMap<String, (u64, HashMap<String, u64>)>, terms: &[String]) -> TermStats {
        let mut df: HashMap<String, u64> = terms.iter().map(|t| (t.clone(), 0)).collect();
        let mut docs = 0f64;
        let mut known = HashMap::new();
        let mut chunks = HashMap::new();
        for (skill, (len, counts)) in per_skill {
            docs += len as f64;
            for (term, n) in &counts {
                *df.entry(term.clone()).or_default() += n;
            }
            chunks.insert(skill.clone(), len as f64);
            known.insert(skill, counts);
        }
        // The knowledge alone is a small sample of the language: a word as common as 之间 or 存在
        // may occur in few of its chunks and so weigh like a key term. A Chinese word's document
        // frequency is therefore averaged with its frequency in general Chinese (jieba's IDF
        // table), as if a general corpus as large as the knowledge were indexed alongside.
        let general = general_rates(df.keys());
        // A phrase key is the one kind of term with a space in it.
        let phrases = terms.iter().filter(|t| t.contains(' ')).cloned().collect();
        TermStats { docs, df, known, chunks, general, phrases }
    }

    /// How many chunks `skill` has (0 when it is not indexed).
    pub fn chunks_in(&self, skill: &str) -> f64 {
        self.chunks.get(skill).copied().unwrap_or(0.0)
    }

    /// The share of documents of general language that contain `term`: general Chinese for a
    /// Chinese word jieba knows, else the pooled knowledge of every skill (add-half smoothed, so a
    /// word found nowhere is rare rather than impossible).
    pub fn background(&self, term: &str) -> f64 {
        match self.general.get(term) {
            Some(&rate) => rate,
            None => (self.df.get(term).copied().unwrap_or(0) as f64 + 0.5) / (self.docs + 1.0),
        }
    }

    /// How many of `skill`'s chunks contain `term`.
    pub fn count_in(&self, skill: &str, term: &str) -> u64 {
        self.known.get(skill).and_then(|s| s.get(term)).copied().unwrap_or(0)
    }

    /// BM25's IDF, with a Chinese word's document frequency averaged with its general one: terms
    /// found nowhere get the highest weight.
    pub fn idf(&self, term: &str) -> f32 {
        let known = self.df.get(term).copied().unwrap_or(0) as f64;
        let df = self.general.get(term).map_or(known, |rate| (known + rate * self.docs) / 2.0);
        (1.0 + (self.docs - df + 0.5) / (df + 0.5)).ln() as f32
    }
}

/// The shares of general Chinese documents that contain the terms jieba's IDF table knows.
fn general_rates<'a>(terms: impl Iterator<Item = &'a String>) -> HashMap<String, f64> {
    terms.filter_map(|t| Some((t.clone(), (-(skillrag_text::general_chinese_idf(t)? as f64)).exp()))).collect()
}

/// The distinct pairs of adjacent terms of `terms` (two different words), first occurrence
/// order: the question's phrases. jieba splits many compounds a domain lives on (劳动关系 into
/// 劳动 and 关系, 夫妻共同债务 into 夫妻, 共同 and 债务); side by side, the words name the domain again.
pub fn phrases(terms: &[String]) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    terms
        .windows(2)
        .filter(|w| w[0] != w[1])
        .map(|w| (w[0].clone(), w[1].clone()))
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// How a phrase is kept among the terms of [`TermStats`]: its words joined by a space, which no
/// analyzed term contains (so a key with a space is a phrase).
pub fn phrase_key(first: &str, second: &str) -> String {
    format!("{first} {second}")
}

/// Distinct terms, first occurrence order.
pub fn unique(terms: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    terms.iter().filter(|t| seen.insert(t.as_str())).cloned().collect()
}

/// IDF-weighted share of the question's distinct `terms` for which `present` holds.
pub fn coverage(terms: &[String], stats: &TermStats, present: impl Fn(&str) -> bool) -> f32 {
    let mut total = 0.0;
    let mut found = 0.0;
    for t in unique(terms) {
        let w = stats.idf(&t);
        total += w;
        if present(&t) {
            found += w;
        }
    }
    if total > 0.0 {
        found / total
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_weigh_more() {
        let stats = TermStats {
            docs: 100.0,
            df: [("劳动".to_string(), 90), ("试用期".to_string(), 3)].into_iter().collect(),
            known: HashMap::new(),
            chunks: HashMap::new(),
            general: HashMap::new(),
            phrases: Vec::new(),
        };
        let terms = vec!["劳动".to_string(), "试用期".to_string()];
        let with_rare = coverage(&terms, &stats, |t| t == "试用期");
        let with_common = coverage(&terms, &stats, |t| t == "劳动");
        assert!(with_rare > 0.9 && with_common < 0.1, "{with_rare} {with_common}");
        assert_eq!(coverage(&terms, &stats, |_| true), 1.0);
        assert_eq!(coverage(&[], &stats, |_| true), 0.0);
        // A term found nowhere is the most informative one.
        assert!(stats.idf("花呗") > stats.idf("试用期"));
    }

    #[test]
    fn everyday_words_weigh_little_even_where_the_knowledge_rarely_uses_them() {
        let terms: Vec<String> = ["之间", "试用期", "virus"].iter().map(|s| s.to_string()).collect();
        let docs = 1000.0;
        let stats = TermStats {
            docs,
            // Each occurs in 2 chunks of this small knowledge base.
            df: terms.iter().map(|t| (t.clone(), 2)).collect(),
            known: HashMap::new(),
            chunks: HashMap::new(),
            general: general_rates(terms.iter()),
            phrases: Vec::new(),
        };
        assert!(stats.idf("之间") < stats.idf("试用期"), "{} {}", stats.idf("之间"), stats.idf("试用期"));
        // English has no general table: its weight is the knowledge's alone.
        let alone = TermStats { general: HashMap::new(), ..stats.clone() };
        assert_eq!(stats.idf("virus"), alone.idf("virus"));
        assert!(alone.idf("之间") > stats.idf("之间"));
    }
}
