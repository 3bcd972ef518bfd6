//! The compiled skill context for a task (docs/design.md §4.8): what an agent that is about to
//! perform a task gets from a skill — its instructions and boundary, and its knowledge compiled in
//! tier order (rules → examples → references) under a budget, each piece labelled `[n]` with its
//! source. It is the ask pipeline stopped before generation: the same gate, route, refusals and
//! retrieval as `Assistant::ask`, so an agent never gets context a question would be refused.

use crate::base::contract::{Context, Refusal, Route, Timings};
use crate::stages::compile::render_piece;
use serde::{Deserialize, Serialize};
use skillrag_core::{Hit, Tier};
use skillrag_engine::{Engine, EngineError};

/// The largest budget a caller may ask for (in the budget's unit). The context is bounded by the
/// number of pieces anyway; a larger number is a mistake worth saying so.
pub const MAX_CONTEXT_BUDGET: usize = 1_000_000;

/// Rules chunks a task context carries whether or not the task's words match them: rules files
/// are short by nature, and a skill with more must not crowd out the task's references.
pub const MAX_STANDING_RULES: usize = 8;

/// Per-task options.
#[derive(Debug, Clone, Default)]
pub struct ContextOptions {
    /// Compile this skill's context (no routing).
    pub skill: Option<String>,
    /// The budget in the configured unit (the local LLM's tokens, else characters); default
    /// the configured one (`[llm] context_tokens` or `context_chars`).
    pub budget: Option<usize>,
}

/// What a skill tells the agent that uses it: the parts of its SKILL.md that govern the work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillBrief {
    pub skill: String,
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<String>,
}

/// The compiled context of one task, or the refusal a question would get.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskContext {
    pub task: String,
    pub route: Route,
    /// Why there is no context: the same refusal `ask` gives (`out_of_scope`, `not_found`,
    /// `ambiguous`, `boundary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    /// The routed skills' instructions and boundaries, in route order.
    pub skills: Vec<SkillBrief>,
    /// The pieces in tier order within the budget, with what was dropped.
    pub context: Context,
    pub warnings: Vec<String>,
    pub timings_ms: Timings,
}

/// The rules tier of the routed skills and of the skills they use, whatever the task's words:
/// rules are what the work must follow (never ask for a password, cite the article), so an
/// agent gets them even when the task does not mention them. At most
/// [`MAX_STANDING_RULES`] chunks, in index order; chunks already retrieved are left to retrieval.
pub fn standing_rules(engine: &Engine, routed: &[String], retrieved: &[Hit]) -> Result<Vec<Hit>, EngineError> {
    let mut skills: Vec<&str> = Vec::new();
    for id in routed {
        let skill = engine.skill(id)?;
        for s in std::iter::once(&skill.id).chain(&skill.settings.uses) {
            if !skills.contains(&s.as_str()) {
                skills.push(s);
            }
        }
    }
    let mut rules = Vec::new();
    for id in skills {
        let Some(index) = engine.index_of(id)? else { continue };
        let sources = index.manifest().files.iter().filter(|(_, f)| f.tier == Tier::Rules).map(|(s, _)| s.clone());
        for chunk in sources.flat_map(|source| index.chunks_of(&source)) {
            let known = |h: &Hit| h.skill == chunk.skill && h.chunk_id == chunk.id;
            if rules.len() < MAX_STANDING_RULES && !retrieved.iter().any(known) {
                rules.push(skillrag_core::Hit::from_chunk(chunk, Default::default(), Default::default()));
            }
        }
    }
    Ok(rules)
}

pub(crate) fn brief(skill: &skillrag_skill::Skill) -> SkillBrief {
    SkillBrief {
        skill: skill.id.clone(),
        name: skill.name.clone(),
        description: skill.description.clone(),
        instructions: skill.instructions.clone().filter(|s| !s.trim().is_empty()),
        boundary: skill.boundary.as_ref().map(|b| b.text.clone()).filter(|s| !s.trim().is_empty()),
    }
}

impl TaskContext {
    /// The context as an agent reads it: each skill's instructions and boundary, then the pieces
    /// in tier order, `[n] tier · skill/source › heading`, then what the budget left out. A
    /// refusal comes first; with no skill to go by (`out_of_scope`, `ambiguous`) it is all there is.
    pub fn render(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        if let Some(refusal) = &self.refusal {
            if self.skills.is_empty() {
                return refusal.message.clone();
            }
            out.push(format!("Refused ({}): {}", refusal.kind.as_str(), refusal.message));
        }
        if let Some(gate) = &self.route.gate {
            return format!("No knowledge is needed for this request ({gate}).");
        }
        for s in &self.skills {
            let mut block = format!("# Skill: {} — {}", s.skill, s.description);
            if let Some(instructions) = &s.instructions {
                block.push_str(&format!("\n\n## Instructions\n{}", instructions.trim()));
            }
            if let Some(boundary) = &s.boundary {
                block.push_str(&format!("\n\n## Boundary\n{}", boundary.trim()));
            }
            out.push(block);
        }
        let c = &self.context;
        if c.pieces.is_empty() && self.refusal.is_some() {
            return out.join("\n\n");
        }
        out.push(format!("# Context ({} of {} {}; rules → examples → references)", c.used, c.budget, c.unit));
        for p in &c.pieces {
            out.push(render_piece(p, &format!("{} · ", p.tier), p.text.trim()));
        }
        if !c.dropped.is_empty() {
            out.push(format!("Left out (over the budget or the piece limit): {}", c.dropped.join(", ")));
        }
        out.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::contract::{ContextPiece, Decision, RefusalKind};

    fn piece(n: usize, tier: &str, source: &str, text: &str) -> ContextPiece {
        ContextPiece {
            n,
            tier: tier.into(),
            skill: "hr".into(),
            source: source.into(),
            heading: "H".into(),
            chunk_id: n as u64,
            text: text.into(),
            pages: None,
            summary: None,
        }
    }

    fn task(refusal: Option<Refusal>) -> TaskContext {
        TaskContext {
            task: "t".into(),
            route: Route { skills: vec!["hr".into()], decision: Decision::Single, ..Route::none() },
            refusal,
            skills: vec![SkillBrief {
                skill: "hr".into(),
                name: "HR".into(),
                description: "Leave rules".into(),
                instructions: Some("Cite the article.".into()),
                boundary: Some("No tax questions.".into()),
            }],
            context: Context {
                pieces: vec![
                    piece(1, "rules", "rules/cite.md", "Always cite."),
                    piece(2, "references", "k/a.md", "Five days."),
                ],
                dropped: vec!["hr/k/b.md#3".into()],
                budget: 100,
                used: 22,
                unit: "chars".into(),
            },
            warnings: vec![],
            timings_ms: Timings::default(),
        }
    }

    #[test]
    fn the_rendered_context_puts_instructions_first_and_labels_each_piece_with_its_tier() {
        let text = task(None).render();
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} missing in {text}"));
        assert!(at("## Instructions\nCite the article.") < at("## Boundary\nNo tax questions."));
        assert!(at("## Boundary") < at("# Context (22 of 100 chars"));
        assert!(at("[1] rules · hr/rules/cite.md › H\nAlways cite.") < at("[2] references · hr/k/a.md › H"));
        assert!(text.ends_with("Left out (over the budget or the piece limit): hr/k/b.md#3"), "{text}");
    }

    #[test]
    fn a_refused_task_renders_as_its_refusal() {
        let refusal = Refusal { kind: RefusalKind::OutOfScope, message: "No skill covers this.".into() };
        let mut unrouted = task(Some(refusal));
        unrouted.skills.clear();
        assert_eq!(unrouted.render(), "No skill covers this.");
    }

    #[test]
    fn a_task_refused_in_its_skill_keeps_the_skill_and_its_rules() {
        let refusal = Refusal { kind: RefusalKind::NotFound, message: "Not in the knowledge base.".into() };
        let mut refused = task(Some(refusal));
        refused.context.pieces.truncate(1);
        let text = refused.render();
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} missing in {text}"));
        assert!(at("Refused (not_found): Not in the knowledge base.") < at("## Instructions\nCite the article."));
        assert!(at("## Boundary") < at("[1] rules · hr/rules/cite.md"), "{text}");
    }
}
