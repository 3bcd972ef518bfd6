//! Skill dependencies (`metadata.uses`): checked once the project's skills are known.
//!
//! A dependency that cannot be followed — an unknown skill, the skill itself, a cycle — is an
//! error `lint` reports with the `uses` line; the skill still loads and serves, without the
//! dependencies it cannot have, so one bad name never takes a skill offline.

use crate::Skill;
use skillrag_core::Diagnostic;
use std::collections::{BTreeMap, VecDeque};

/// Drops the `uses` entries that cannot be followed from `skills`, with one error each; a
/// `disabled` skill is dropped with a warning (it is followed again once enabled).
pub(crate) fn resolve(skills: &mut [Skill], disabled: &[String]) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let known: Vec<String> = skills.iter().map(|s| s.id.clone()).collect();
    for skill in skills.iter_mut() {
        let (file, line) = (skill.skill_file(), Some(skill.settings.uses_line).filter(|l| *l > 0));
        let mut kept: Vec<String> = Vec::new();
        for name in std::mem::take(&mut skill.settings.uses) {
            if disabled.contains(&name) {
                let message =
                    format!("`uses` names `{name}`, which is disabled; its knowledge is left out until it is enabled");
                diagnostics.push(Diagnostic::warning(&file, line, message));
                continue;
            }
            let problem = if name == skill.id {
                Some(format!("`uses` names the skill itself (`{name}`); ignored"))
            } else if !known.contains(&name) {
                let hint =
                    if known.len() > 1 { format!(" (skills: {})", others(&known, &skill.id)) } else { String::new() };
                Some(format!("`uses` names `{name}`, which is not a skill of this project{hint}; ignored"))
            } else {
                None
            };
            match problem {
                Some(message) => diagnostics.push(Diagnostic::error(&file, line, message)),
                None if !kept.contains(&name) => kept.push(name),
                None => {}
            }
        }
        skill.settings.uses = kept;
    }
    // Every skill on a cycle is reported, and serves without its dependencies: which edge of a
    // cycle its authors meant to keep is theirs to say.
    let graph: BTreeMap<String, Vec<String>> = skills.iter().map(|s| (s.id.clone(), s.settings.uses.clone())).collect();
    for skill in skills.iter_mut() {
        if let Some(cycle) = cycle_through(&graph, &skill.id) {
            let line = Some(skill.settings.uses_line).filter(|l| *l > 0);
            let message = format!(
                "`uses` forms a cycle ({}); `{}` serves without its dependencies until it is broken",
                cycle.join(" → "),
                skill.id
            );
            diagnostics.push(Diagnostic::error(skill.skill_file(), line, message));
            skill.settings.uses.clear();
        }
    }
    diagnostics
}

fn others(known: &[String], id: &str) -> String {
    known.iter().filter(|k| *k != id).map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// The shortest cycle from `start` back to itself (`a → b → a`), if any. A breadth-first
/// search with parents: the graph is a project's skills, tens to hundreds of nodes.
fn cycle_through(graph: &BTreeMap<String, Vec<String>>, start: &str) -> Option<Vec<String>> {
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue: VecDeque<&str> = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flatten() {
            if next == start {
                let mut walked = vec![start.to_string()];
                let mut at = node;
                while at != start {
                    walked.push(at.to_string());
                    at = parent.get(at).copied().unwrap_or(start);
                }
                walked[1..].reverse();
                walked.push(start.to_string());
                return Some(walked);
            }
            if !parent.contains_key(next.as_str()) && next != start {
                parent.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn skill(id: &str, uses: &str) -> Skill {
        let text = format!("---\nname: {id}\ndescription: d\nmetadata:\n  uses: \"{uses}\"\n---\n");
        let parsed = crate::parse_skill_text(&Path::new("/p/skills").join(id), id, &text);
        parsed.skill.unwrap()
    }

    fn uses(skills: &[Skill], id: &str) -> Vec<String> {
        skills.iter().find(|s| s.id == id).unwrap().settings.uses.clone()
    }

    #[test]
    fn valid_dependencies_are_kept() {
        let mut skills = vec![
            skill("fix-bug", "understand-code, search-error-log"),
            skill("understand-code", ""),
            skill("search-error-log", ""),
        ];
        assert!(resolve(&mut skills, &[]).is_empty());
        assert_eq!(uses(&skills, "fix-bug"), vec!["understand-code", "search-error-log"]);
    }

    #[test]
    fn the_lenient_form_takes_a_list() {
        let text = "---\nname: a\ndescription: d\nuses:\n  - b\n  - c\n---\n";
        let parsed = crate::parse_skill_text(Path::new("/p/skills/a"), "a", text).skill.unwrap();
        assert_eq!(parsed.settings.uses, vec!["b", "c"]);
        assert_eq!(parsed.settings.uses_line, 4);
    }

    #[test]
    fn unknown_names_and_the_skill_itself_are_errors_with_the_line() {
        let mut skills = vec![skill("a", "a, nope, b"), skill("b", "")];
        let diags = resolve(&mut skills, &[]);
        let text: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        assert_eq!(diags.len(), 2, "{text:#?}");
        assert!(diags.iter().all(|d| d.is_error() && d.line == Some(5)), "{text:#?}");
        assert!(text.iter().any(|t| t.contains("names the skill itself")), "{text:#?}");
        assert!(text.iter().any(|t| t.contains("`nope`") && t.contains("skills: b")), "{text:#?}");
        assert_eq!(uses(&skills, "a"), vec!["b"], "the valid dependency stays");
    }

    #[test]
    fn a_cycle_is_reported_for_each_skill_on_it_and_those_serve_alone() {
        let mut skills = vec![skill("a", "b"), skill("b", "c"), skill("c", "a"), skill("d", "a")];
        let diags = resolve(&mut skills, &[]);
        let text: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        assert_eq!(diags.len(), 3, "{text:#?}");
        assert!(text.iter().any(|t| t.contains("a → b → c → a")), "{text:#?}");
        assert!(text.iter().any(|t| t.contains("b → c → a → b")), "{text:#?}");
        for id in ["a", "b", "c"] {
            assert!(uses(&skills, id).is_empty(), "{id} keeps no dependency");
        }
        assert_eq!(uses(&skills, "d"), vec!["a"], "a skill that only leads into a cycle keeps it");
    }
}
