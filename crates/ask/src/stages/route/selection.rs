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

use crate::base::evidence::{unique, TermStats};

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

/// The mean, over the question's distinct words and its phrases that occur in some skill's
/// knowledge, of the clipped log likelihood ratio log P(event | skill) / P(event | background),
/// scaled to [-1, 1].
///
/// Phrases (adjacent word pairs counted by [`TermStats::add_phrases`]) are the term-dependence half of the model (Metzler
/// & Croft's sequential dependence model, SIGIR 2005, scores ordered pairs beside single words):
/// 劳动 and 关系 are everyday words that a family-law skill uses too, 劳动 关系 is labour law's.
/// A phrase that no skill's knowledge contains is left out: it says nothing about any skill, and
/// as an unseen event it would cost a large skill more than a small one (the smoothing trusts the
/// large one's absence more).
pub fn specificity<F: Fn(&str) -> f64>(terms: &[String], stats: &TermStats, skill: &SkillModel<F>) -> f32 {
    let events: Vec<String> = unique(terms).into_iter().chain(stats.phrases_found().cloned()).collect();
    if events.is_empty() {
        return 0.0;
    }
    let total: f64 = events
        .iter()
        .map(|t| {
            let background = stats.background(t);
            let smoothed = ((skill.chunks_with)(t) + PRIOR_CHUNKS * background) / (skill.chunks + PRIOR_CHUNKS);
            (smoothed / background).ln().clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO)
        })
        .sum();
    (total / events.len() as f64 / MAX_LOG_RATIO) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

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
    fn a_phrase_of_one_skill_outweighs_its_words_spread_over_another() {
        // jieba splits 劳动关系: family law uses 关系 (夫妻关系, 收养关系) far more than labour law
        // does, and 认定 too (its judicial interpretations); only labour law uses 劳动 关系.
        let labour_relation = crate::base::evidence::phrase_key("劳动", "关系");
        let words = [("劳动", 300, 100), ("关系", 150, 450), ("认定", 50, 300)];
        let per_skill = |pick: fn(&(&str, u64, u64)) -> u64, phrase: u64| -> (u64, HashMap<String, u64>) {
            let mut counts: HashMap<String, u64> = words.iter().map(|w| (w.0.to_string(), pick(w))).collect();
            counts.insert(labour_relation.clone(), phrase);
            (1000, counts)
        };
        let mut keys: Vec<String> = words.iter().map(|w| w.0.to_string()).collect();
        keys.push(labour_relation.clone());
        let with_phrases = TermStats::from_counts(
            [("labour".to_string(), per_skill(|w| w.1, 120)), ("family".to_string(), per_skill(|w| w.2, 0))]
                .into_iter()
                .collect(),
            &keys,
        );
        let words_only = TermStats::from_counts(
            [("labour".to_string(), per_skill(|w| w.1, 0)), ("family".to_string(), per_skill(|w| w.2, 0))]
                .into_iter()
                .collect(),
            &keys,
        );
        let q = terms(&["劳动", "关系", "认定"]);
        let lead =
            |s: &TermStats| specificity(&q, s, &s.skill_model("labour")) - specificity(&q, s, &s.skill_model("family"));
        assert!(lead(&words_only) < 0.0, "words alone favour family law: {}", lead(&words_only));
        assert!(lead(&with_phrases) > 0.0, "the phrase is labour law's: {}", lead(&with_phrases));
        // A phrase no skill contains is no evidence either way (`words_only` has none): the same
        // score as without the phrase at all.
        let alone = TermStats::from_counts(
            [("labour".to_string(), per_skill(|w| w.1, 0)), ("family".to_string(), per_skill(|w| w.2, 0))]
                .into_iter()
                .map(|(k, (n, mut c))| {
                    c.remove(&labour_relation);
                    (k, (n, c))
                })
                .collect(),
            &keys[..3],
        );
        let family = |s: &TermStats| specificity(&q, s, &s.skill_model("family"));
        assert!((family(&words_only) - family(&alone)).abs() < 1e-6);
    }

    #[test]
    fn one_rare_word_is_clipped() {
        let s = stats(&[("某某某罕见名", 1, 0), ("工资", 0, 40), ("加班", 0, 20)]);
        let q = terms(&["某某某罕见名", "工资", "加班"]);
        let one_word = specificity(&q, &s, &s.skill_model("statute"));
        assert!(one_word < 0.35, "{one_word}");
    }
}
