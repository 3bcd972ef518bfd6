//! A skill's routing profile: the words and embeddings of its name, title, description,
//! triggers, examples and supported topics.

use skillrag_core::Language;
use skillrag_embed::{EmbedKind, Embedder};
use skillrag_skill::Skill;
use skillrag_store::EmbeddingCache;
use std::collections::{HashMap, HashSet};

/// A trigger keyword and its analyzed terms.
#[derive(Debug, Clone)]
pub struct Trigger {
    pub text: String,
    lower: String,
    terms: Vec<String>,
}

impl Trigger {
    fn new(text: &str) -> Trigger {
        Trigger {
            text: text.to_string(),
            lower: skillrag_text::folded_lower(text),
            terms: skillrag_text::analyze(text),
        }
    }

    /// The trigger appears in the question: as a substring, or all its analyzed terms do.
    pub fn matches(&self, question_lower: &str, question_terms: &HashSet<String>) -> bool {
        if self.lower.is_empty() {
            return false;
        }
        let ascii_word = self.lower.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ' ');
        let substring =
            if ascii_word { contains_word(question_lower, &self.lower) } else { question_lower.contains(&self.lower) };
        substring || (!self.terms.is_empty() && self.terms.iter().all(|t| question_terms.contains(t)))
    }
}

fn contains_word(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + needle.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// Everything the dispatcher knows about one skill without searching its knowledge.
#[derive(Debug, Clone)]
pub struct SkillProfile {
    pub skill: String,
    pub language: Language,
    /// Written in Traditional Chinese ([`skillrag_core::is_traditional`]).
    pub traditional: bool,
    pub triggers: Vec<Trigger>,
    /// Term counts over the whole profile text.
    terms: HashMap<String, u32>,
    /// Terms of each example, to leave one out when fitting.
    example_terms: Vec<Vec<String>>,
    /// Embeddings of the description (`None` slot 0 when invisible) and of each example.
    description_vector: Option<Vec<f32>>,
    example_vectors: Vec<Option<Vec<f32>>>,
}

impl SkillProfile {
    pub fn new(skill: &Skill) -> SkillProfile {
        let mut text = vec![skill.id.replace('-', " "), skill.description.clone()];
        text.extend(skill.title.clone());
        text.extend(skill.triggers.iter().cloned());
        if let Some(b) = &skill.boundary {
            text.extend(b.supports.iter().cloned());
        }
        let mut terms: HashMap<String, u32> = HashMap::new();
        for t in text.iter().flat_map(|t| skillrag_text::analyze(t)) {
            *terms.entry(t).or_default() += 1;
        }
        let example_terms: Vec<Vec<String>> = skill.examples.iter().map(|e| skillrag_text::analyze(e)).collect();
        for t in example_terms.iter().flatten() {
            *terms.entry(t.clone()).or_default() += 1;
        }
        let language_sample = format!("{} {}", skill.description, skill.examples.join(" "));
        SkillProfile {
            skill: skill.id.clone(),
            language: Language::detect(&language_sample),
            traditional: skillrag_core::is_traditional(&language_sample),
            triggers: skill.triggers.iter().map(|t| Trigger::new(t)).collect(),
            terms,
            example_terms,
            description_vector: None,
            example_vectors: vec![None; skill.examples.len()],
        }
    }

    /// Embeds the description and examples (through the cache), keeping only what the model can see.
    pub fn embed(
        &mut self,
        skill: &Skill,
        embedder: &dyn Embedder,
        cache: Option<&mut EmbeddingCache>,
        min_visibility: f32,
    ) -> Result<(), skillrag_embed::EmbedError> {
        let mut texts: Vec<(String, EmbedKind)> = vec![(skill.description.clone(), EmbedKind::Passage)];
        texts.extend(skill.examples.iter().map(|e| (e.clone(), EmbedKind::Query)));
        let key = |(t, k): &(String, EmbedKind)| match k {
            EmbedKind::Query => format!("\u{1}query\u{1}{t}"),
            EmbedKind::Passage => t.clone(),
        };
        let mut cache = cache;
        let mut vectors: Vec<Option<(Vec<f32>, f32)>> =
            texts.iter().map(|t| cache.as_ref().and_then(|c| c.get(&key(t)))).collect();
        for kind in [EmbedKind::Passage, EmbedKind::Query] {
            let missing: Vec<usize> =
                (0..texts.len()).filter(|&i| vectors[i].is_none() && texts[i].1 == kind).collect();
            if missing.is_empty() {
                continue;
            }
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i].0.as_str()).collect();
            for (&i, e) in missing.iter().zip(embedder.embed(&batch, kind)?) {
                if let Some(c) = cache.as_deref_mut() {
                    c.put(&key(&texts[i]), &e.vector, e.visibility);
                }
                vectors[i] = Some((e.vector, e.visibility));
            }
        }
        if let Some(c) = cache {
            let _ = c.flush(); // only a cache
        }
        let visible = |v: Option<(Vec<f32>, f32)>| v.filter(|(_, vis)| *vis >= min_visibility).map(|(v, _)| v);
        let mut it = vectors.into_iter();
        self.description_vector = it.next().and_then(visible);
        self.example_vectors = it.map(visible).collect();
        Ok(())
    }

    /// Whether the question is in the skill's language and, for Chinese, its script: zh-Hans and
    /// zh-Hant are two language tags (BCP 47), and a question in Traditional characters is asked
    /// of the sources written in them. The analyzer folds the scripts together for matching words,
    /// so this is the one signal that still tells them apart.
    pub fn writes_like(&self, question: &crate::base::question::Question) -> bool {
        self.language == question.language && self.traditional == question.traditional
    }

    /// The triggers the question contains.
    pub fn trigger_hits(&self, question: &crate::base::question::Question) -> Vec<String> {
        self.triggers
            .iter()
            .filter(|t| t.matches(&question.lower, &question.term_set))
            .map(|t| t.text.clone())
            .collect()
    }

    /// Whether the profile contains `term`, leaving out example `skip` (for fitting).
    pub fn has_term(&self, term: &str, skip: Option<usize>) -> bool {
        let count = self.terms.get(term).copied().unwrap_or(0);
        let own = skip
            .and_then(|i| self.example_terms.get(i))
            .map_or(0, |terms| terms.iter().filter(|t| t.as_str() == term).count() as u32);
        count > own
    }

    /// Highest cosine between the question and the profile's visible texts, leaving out example `skip`.
    pub fn dense_similarity(&self, query: &[f32], skip: Option<usize>) -> Option<f32> {
        let examples =
            self.example_vectors.iter().enumerate().filter(|(i, _)| Some(*i) != skip).filter_map(|(_, v)| v.as_ref());
        self.description_vector.iter().chain(examples).map(|v| skillrag_embed::cosine(v, query)).max_by(f32::total_cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::question::Question;
    use std::path::Path;

    fn profile(id: &str, description: &str, example: &str) -> SkillProfile {
        let text = format!("---\nname: {id}\ndescription: {description}\n---\n\n## Examples\n\n- {example}\n");
        let skill = skillrag_skill::parse_skill_text(Path::new(id), id, &text).skill.expect("a valid skill");
        SkillProfile::new(&skill)
    }

    fn question(text: &str) -> Question {
        Question::new(text, skillrag_text::analyze(text), None)
    }

    #[test]
    fn a_question_is_asked_in_its_own_language_and_script() {
        let simplified = profile("baike", "中文百科知识库，回答条目中的事实性问题。", "松鸦属于什么科目？");
        let traditional = profile("wiki-tw", "中文百科知識庫，回答條目中的事實性問題。", "松鴉屬於什麼科目？");
        let english = profile("papers", "Coronavirus research papers.", "What is the R0 of SARS?");
        let asked = |text: &str| {
            let q = question(text);
            [&simplified, &traditional, &english].map(|p| p.writes_like(&q))
        };
        assert_eq!(asked("泰国皇家军队的主要职责是什么？"), [true, false, false]);
        assert_eq!(asked("泰國皇家軍隊的主要職責是什麼？"), [false, true, false]);
        assert_eq!(asked("What is the incubation period?"), [false, false, true]);
        // The words still match across the scripts: only the script signal tells them apart.
        let trigger = Trigger::new("維基百科");
        let q = question("维基百科收录了什么");
        assert!(trigger.matches(&q.lower, &q.term_set));
    }
}
