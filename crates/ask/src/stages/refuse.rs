//! Which refusal a question gets, and why: `out_of_scope`, `not_found`, `ambiguous`, or
//! `boundary` when the question falls under what the skill's SKILL.md says it does not support.
//! The texts are in [`messages`](crate::base::messages).

use crate::base::contract::{Candidate, Decision, Refusal, RefusalKind, Route};
use crate::base::evidence::{coverage, TermStats};
use crate::base::messages;
use crate::base::question::Question;
use crate::llm::Assist;
use skillrag_core::Language;
use skillrag_engine::Engine;
use skillrag_skill::Boundary;

/// A routed question's refusals: they depend on the project, the question (its terms, for the
/// skills' boundaries) and the language it is answered in.
#[derive(Clone, Copy)]
pub struct Refuser<'a> {
    pub engine: &'a Engine,
    pub question: &'a Question,
    pub stats: &'a TermStats,
    pub language: Language,
}

impl Refuser<'_> {
    /// No skill accepted the question: `out_of_scope`, giving as the reason the boundary of a
    /// candidate skill it is about, if any. (`boundary` is the refusal of a *routed* skill.)
    pub fn unrouted(&self, route: &Route) -> Refusal {
        // Every skill, in load order; when they are too many to name, the nearest (the route's
        // candidates, best first) are the ones named.
        let all: Vec<&str> = self.engine.skills().iter().map(|s| s.id.as_str()).collect();
        let mut skills: Vec<&str> = Vec::with_capacity(all.len());
        if all.len() > messages::LISTED_SKILLS {
            skills.extend(route.candidates.iter().map(|c| c.skill.as_str()));
        }
        skills.extend(all.iter().filter(|s| !skills.contains(s)).collect::<Vec<_>>());
        let boundary = route.candidates.iter().find_map(|c| {
            let skill = self.engine.skill(&c.skill).ok()?;
            let item = unsupported_topic(self.question, skill.boundary.as_ref()?, self.stats)?;
            Some(messages::out_of_scope_by_boundary(self.language, &skills, &c.skill, &item))
        });
        let mut refusal = boundary.unwrap_or_else(|| messages::out_of_scope(self.language, &skills));
        // A skill the question names (its words are in the skill's name, triggers or examples)
        // but in another language than the skill's knowledge, with a model that cannot match
        // across the two: say so, since that, not the knowledge, may be why none fit.
        let named = |c: &&Candidate| !c.language_match && (c.profile > 0.0 || !c.keyword_hits.is_empty());
        let across =
            route.candidates.iter().filter(named).find_map(|c| Some((&c.skill, self.across_languages(&c.skill)?)));
        if let Some((skill, written)) = across {
            refusal.message.push(' ');
            refusal.message.push_str(&messages::across_languages(self.language, skill, written));
        }
        refusal
    }

    /// The language of `skill_id`'s knowledge, when it is not the question's and the embedding
    /// model in use cannot match the two: it cannot see the question or the skill's passages
    /// (all-MiniLM-L6-v2 sees English only), or there is no model (BM25 matches words, which
    /// two languages do not share). A multilingual model sees both, and then this is `None`.
    fn across_languages(&self, skill_id: &str) -> Option<Language> {
        let skill = self.engine.skill(skill_id).ok()?;
        let written = Language::detect(&format!("{} {}", skill.description, skill.examples.join(" ")));
        if written == self.question.language {
            return None;
        }
        let min = self.engine.settings().retrieval.section.min_visibility;
        let index = self.engine.index_of(skill_id).ok().flatten();
        let sees_knowledge = index.and_then(|i| i.mean_visibility()).is_some_and(|v| v >= min);
        let sees_question = self.question.vector.is_some();
        (!(sees_knowledge && sees_question)).then_some(written)
    }

    /// The routed skill's evidence is weak: `boundary` when the question is about something the
    /// skill says it does not support, otherwise `not_found`.
    pub fn weak_evidence(&self, skill_id: &str) -> Refusal {
        let boundary = self.engine.skill(skill_id).ok().and_then(|s| s.boundary.as_ref());
        match boundary.and_then(|b| unsupported_topic(self.question, b, self.stats)) {
            Some(item) => messages::boundary(self.language, skill_id, &item),
            None => {
                let mut refusal = messages::not_found(self.language, skill_id);
                if let Some(written) = self.across_languages(skill_id) {
                    refusal.message.push(' ');
                    refusal.message.push_str(&messages::across_languages(self.language, skill_id, written));
                }
                refusal
            }
        }
    }

    /// The refusal of a routed question whose retrieval kept nothing: `not_found` (or
    /// `boundary`) in its weak skill — or, with a weak fit to the skill too, refused as an
    /// unrouted question after all (a candidate's `boundary`, else `out_of_scope`), the route
    /// then marked `none`.
    pub fn nothing_retrieved(
        &self,
        route: &mut Route,
        weak_skills: &[String],
        follow_up: bool,
        in_domain: f32,
    ) -> Refusal {
        match weak_skill(route, weak_skills, follow_up, in_domain) {
            Some(skill) => self.weak_evidence(&skill),
            None => {
                unroute(route);
                self.unrouted(route)
            }
        }
    }

    /// The two skills an ambiguous route is between, and the question which one is meant —
    /// worded by `clarifier` (the LLM) when its question names both skills, so the user can
    /// answer it.
    pub fn ambiguous(&self, skills: &[String], clarifier: Option<&Assist>) -> Refusal {
        let describe = |id: &String| {
            let d = self.engine.skill(id).map(|s| s.description.clone()).unwrap_or_default();
            let short: String = d.chars().take(40).collect();
            (id.clone(), short)
        };
        let (a, b) = (describe(&skills[0]), describe(&skills[1]));
        let worded = clarifier.and_then(|c| c.clarify(&self.question.text, &a, &b, self.language));
        match worded.filter(|m| m.contains(&a.0) && m.contains(&b.0)) {
            Some(message) => Refusal { kind: RefusalKind::Ambiguous, message },
            None => messages::ambiguous(self.language, &a, &b),
        }
    }
}

/// The skill whose weak evidence a question is refused for; `None` when the question is not
/// that skill's after all — weak evidence and a confidence below `in_domain`. A route the caller
/// forced, or a follow-up's, always stays with its skill.
fn weak_skill(route: &Route, weak_skills: &[String], follow_up: bool, in_domain: f32) -> Option<String> {
    if !route.forced && !follow_up && route.confidence < in_domain {
        return None;
    }
    Some(weak_skills.first().or(route.skills.first()).cloned().unwrap_or_default())
}

/// Marks a route as `none`: the question is refused as out of scope after all.
fn unroute(route: &mut Route) {
    route.decision = Decision::None;
    route.skills.clear();
}

/// The unsupported item of `boundary` that the question is about, if any: an item (or one of its
/// `、`/`,`-separated parts) whose informative words the question contains (≥ 75%, IDF-weighted).
pub fn unsupported_topic(question: &Question, boundary: &Boundary, stats: &TermStats) -> Option<String> {
    for item in &boundary.not_supported {
        let parts =
            item.split(['、', ',', '，', '/', '与', '和', '及', '或', '等']).map(str::trim).filter(|p| !p.is_empty());
        for part in parts {
            let terms = skillrag_text::analyze(part);
            if terms.is_empty() {
                continue;
            }
            if coverage(&terms, stats, |t| question.term_set.contains(t)) >= 0.75 {
                return Some(item.clone());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(confidence: f32, forced: bool) -> Route {
        Route { skills: vec!["a".into()], decision: Decision::Single, confidence, forced, ..Route::none() }
    }

    #[test]
    fn weak_evidence_in_a_weakly_fitting_skill_is_out_of_scope() {
        assert_eq!(weak_skill(&route(0.9, false), &["a".into()], false, 0.7).as_deref(), Some("a"));
        assert_eq!(weak_skill(&route(0.6, false), &["a".into()], false, 0.7), None);
        assert_eq!(weak_skill(&route(0.6, true), &["a".into()], false, 0.7).as_deref(), Some("a"), "forced");
        assert_eq!(weak_skill(&route(0.6, false), &[], true, 0.7).as_deref(), Some("a"), "a follow-up");
        let mut r = route(0.6, false);
        unroute(&mut r);
        assert_eq!((r.decision, r.skills.len()), (Decision::None, 0));
    }

    fn question(text: &str) -> Question {
        Question::new(text, skillrag_text::analyze(text), None)
    }

    #[test]
    fn finds_the_unsupported_item() {
        let b = Boundary {
            text: String::new(),
            supports: vec![],
            not_supported: vec!["刑事、知识产权、婚姻家庭等其他法律领域".into(), "personal medical advice".into()],
        };
        let stats = TermStats::default();
        assert_eq!(
            unsupported_topic(&question("离婚时婚姻家庭财产怎么分？"), &b, &stats).as_deref(),
            Some("刑事、知识产权、婚姻家庭等其他法律领域")
        );
        assert!(unsupported_topic(&question("Can you give me personal medical advice?"), &b, &stats).is_some());
        assert!(unsupported_topic(&question("试用期最长多久？"), &b, &stats).is_none());
    }
}
