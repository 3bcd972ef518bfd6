//! Resource selection (federated search): how much *more* a skill's knowledge uses the question's
//! words than general language does.
//!
//! The family is language-model-based resource selection (Si, Jin, Callan & Ogilvie, "A language
//! modeling framework for resource selection", CIKM 2002; Xu & Croft's collection language
//! models): each skill's knowledge is a unigram model over its chunks, smoothed towards a general
//! background with a Dirichlet prior, and the question's likelihood under it is divided by its
//! likelihood under the background. Unlike "the word occurs somewhere in the knowledge", the
//! ratio does not grow with a skill's size or breadth: a broad skill uses everyday words at about
//! the general rate (ratio ≈ 1, log ≈ 0), a statute skill uses 抚养费 hundreds of times more often,
//! and a skill with no knowledge has exactly the background's likelihood (0: it attracts nothing).
//!
//! The background is general Chinese (jieba's IDF table) for Chinese words, which no skill of the
//! project changes; other words fall back to the pooled knowledge of every skill.

use crate::evidence::{unique, TermStats};

/// The Dirichlet prior's weight, in chunks: how much of the background a skill's model keeps. A
/// skill with far fewer chunks than this says little either way; one with far more speaks for
/// itself, including about the words it never uses.
pub const PRIOR_CHUNKS: f64 = 100.0;

/// One word moves the score by at most this log ratio (e^5 ≈ 150×), so a single rare name the
/// skill happens to contain cannot outweigh the rest of the question.
const MAX_LOG_RATIO: f64 = 5.0;

/// A skill's language model, as far as a question needs it: its chunk count and how many chunks
/// contain each question word.
pub struct SkillModel<F: Fn(&str) -> f64> {
    pub chunks: f64,
    pub chunks_with: F,
}

impl TermStats {
    /// The model of `skill`'s whole knowledge.
    pub fn skill_model(&self, skill: &str) -> SkillModel<impl Fn(&str) -> f64 + '_> {
        let skill = skill.to_string();
        SkillModel { chunks: self.chunks_in(&skill), chunks_with: move |t: &str| self.count_in(&skill, t) as f64 }
    }
}

/// The mean, over the question's distinct words, of the clipped log likelihood ratio
/// log P(word | skill) / P(word | background), scaled to [-1, 1].
pub fn specificity<F: Fn(&str) -> f64>(terms: &[String], stats: &TermStats, skill: &SkillModel<F>) -> f32 {
    let words = unique(terms);
    if words.is_empty() {
        return 0.0;
    }
    let total: f64 = words
        .iter()
        .map(|t| {
            let background = stats.background(t);
            let smoothed = ((skill.chunks_with)(t) + PRIOR_CHUNKS * background) / (skill.chunks + PRIOR_CHUNKS);
            (smoothed / background).ln().clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO)
        })
        .sum();
    (total / words.len() as f64 / MAX_LOG_RATIO) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// Two skills: a small statute (200 chunks) and a broad one (4000 chunks).
    fn stats(counts: &[(&str, u64, u64)]) -> TermStats {
        let words: Vec<String> = counts.iter().map(|(w, ..)| w.to_string()).collect();
        let statute = counts.iter().map(|(w, s, _)| (w.to_string(), *s)).collect();
        let broad = counts.iter().map(|(w, _, b)| (w.to_string(), *b)).collect();
        TermStats::from_counts(
            [("statute".to_string(), (200, statute)), ("broad".to_string(), (4000, broad))].into_iter().collect(),
            &words,
        )
    }

    #[test]
    fn a_broad_skill_does_not_outscore_a_narrow_one_on_its_own_words() {
        // Everyday words the broad skill uses at about the general rate; the statute's own word
        // it uses hundreds of times more often.
        let s = stats(&[("离婚", 40, 30), ("孩子", 20, 200), ("抚养费", 30, 2)]);
        let q = terms(&["离婚", "孩子", "抚养费"]);
        let statute = specificity(&q, &s, &s.skill_model("statute"));
        let broad = specificity(&q, &s, &s.skill_model("broad"));
        assert!(statute > broad + 0.2, "statute {statute} broad {broad}");
    }

    #[test]
    fn a_skill_without_knowledge_is_neutral_and_unknown_words_cost_the_big_skill_more() {
        let s = stats(&[("试用期", 0, 0)]);
        let empty = SkillModel { chunks: 0.0, chunks_with: |_: &str| 0.0 };
        assert!(specificity(&terms(&["试用期"]), &s, &empty).abs() < 1e-6);
        // A word neither skill has: the bigger skill is surer it does not use it.
        let q = terms(&["试用期"]);
        assert!(specificity(&q, &s, &s.skill_model("broad")) < specificity(&q, &s, &s.skill_model("statute")));
        assert!(specificity(&q, &s, &s.skill_model("statute")) < 0.0);
        assert_eq!(specificity(&[], &s, &s.skill_model("statute")), 0.0);
    }

    #[test]
    fn one_rare_word_is_clipped() {
        let s = stats(&[("某某某罕见名", 1, 0), ("工资", 0, 40), ("加班", 0, 20)]);
        let q = terms(&["某某某罕见名", "工资", "加班"]);
        let one_word = specificity(&q, &s, &s.skill_model("statute"));
        assert!(one_word < 0.35, "{one_word}");
    }
}
