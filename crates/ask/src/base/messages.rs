//! Every text the ask path itself writes for a user — refusals, warnings, the replies to gated
//! requests — in the question's language. (Prompts for the LLM live with the step that sends
//! them.) One place, so a wording or a new language is changed here and nowhere else.

use crate::base::contract::GateKind;
use crate::base::contract::{Refusal, RefusalKind};
use skillrag_core::Language;

fn zh(language: Language) -> bool {
    language == Language::Chinese
}

/// The most skills a message names: with hundreds of skills a refusal that lists them all is a
/// page of names. Past this, the rest are counted.
pub const LISTED_SKILLS: usize = 8;

/// `skills` joined for a message, the first [`LISTED_SKILLS`] of them and a count of the rest.
fn skill_list(language: Language, skills: &[&str]) -> String {
    let shown = skills[..skills.len().min(LISTED_SKILLS)].join(if zh(language) { "、" } else { ", " });
    match skills.len().saturating_sub(LISTED_SKILLS) {
        0 => shown,
        _ if zh(language) => format!("{shown}等 {} 个技能", skills.len()),
        rest => format!("{shown} and {rest} more"),
    }
}

/// No skill fits the question. `skills`: the nearest first; past [`LISTED_SKILLS`] they are counted.
pub fn out_of_scope(language: Language, skills: &[&str]) -> Refusal {
    let list = skill_list(language, skills);
    let message = if zh(language) {
        format!("这个问题不在现有技能的范围内（可回答：{list}）。")
    } else {
        format!("This question is outside the scope of the available skills ({list}).")
    };
    Refusal { kind: RefusalKind::OutOfScope, message }
}

/// No skill fits, and the nearest skill's SKILL.md says it does not support `item`: still
/// `out_of_scope` (no skill was chosen), with the boundary as the reason.
pub fn out_of_scope_by_boundary(language: Language, skills: &[&str], skill: &str, item: &str) -> Refusal {
    let list = skill_list(language, skills);
    let message = if zh(language) {
        format!("这个问题不在现有技能的范围内：技能「{skill}」不支持{item}（可回答：{list}）。")
    } else {
        format!(
            "This question is outside the scope of the available skills: `{skill}` does not support {item} ({list})."
        )
    };
    Refusal { kind: RefusalKind::OutOfScope, message }
}

/// The skill fits, but its knowledge has nothing that answers.
pub fn not_found(language: Language, skill: &str) -> Refusal {
    let message = if zh(language) {
        format!("知识库中没有找到相关信息（技能：{skill}）。")
    } else {
        format!("Not found in the knowledge base (skill: {skill}).")
    };
    Refusal { kind: RefusalKind::NotFound, message }
}

/// Why a skill whose knowledge is `written` in another language than the question may not have
/// matched it: the embedding model in use cannot match across languages; a multilingual one can.
pub fn across_languages(language: Language, skill: &str, written: Language) -> String {
    const SETUP: &str = "`eval \"$(scripts/setup-e5 local)\"` then `skillrag index`";
    match (zh(language), written) {
        (true, _) => format!(
            "技能「{skill}」的知识不是中文写的，当前的嵌入模型无法跨语言匹配。请用该技能的语言提问，\
             或换用多语言模型 multilingual-e5-small（{SETUP}）。"
        ),
        (false, Language::Chinese) => format!(
            "The knowledge of `{skill}` is in Chinese, and the embedding model in use cannot match a question \
             in another language to it. Ask in Chinese, or use the multilingual model multilingual-e5-small \
             ({SETUP})."
        ),
        (false, Language::Other) => format!(
            "The knowledge of `{skill}` is in another language than the question, and the embedding model in \
             use cannot match across languages. Ask in the skill's language, or use the multilingual model \
             multilingual-e5-small ({SETUP})."
        ),
    }
}

/// One part of a multi-intent question that its skill's knowledge does not answer (the other
/// parts are answered).
pub fn part_not_found(language: Language, skill: &str, part: &str) -> String {
    if zh(language) {
        format!("（“{}”：技能「{skill}」的知识库中没有找到答案。）", part.trim())
    } else {
        format!("(“{}”: not found in the knowledge base of `{skill}`.)", part.trim())
    }
}

/// A compare question's side with no evidence of its own (its cell in the extractive table).
pub fn side_not_found(language: Language) -> String {
    if zh(language) {
        "（知识库中没有找到这一项的依据。）".to_string()
    } else {
        "(Nothing on this in the knowledge base.)".to_string()
    }
}

/// The header of a compare question's extractive table.
pub fn compare_table_header(language: Language) -> &'static str {
    if zh(language) {
        "| 比较对象 | 知识库中的依据 |\n|---|---|"
    } else {
        "| Compared | What the knowledge base says |\n|---|---|"
    }
}

/// What the model is told about a compare question, after its usual instructions.
pub fn compare_instruction(language: Language, sides: &[&str]) -> String {
    if zh(language) {
        format!(
            "\n\n这是一个比较问题：先分别说明资料对「{}」各自的规定，再指出区别；每一方都要标注它依据的资料编号。",
            sides.join("」「")
        )
    } else {
        format!(
            "\n\nThis is a comparison: say what the context says about each of {}, then how they differ; cite each side's own passages.",
            sides.join(", ")
        )
    }
}

/// The question is about `item`, which the skill's SKILL.md says it does not support.
pub fn boundary(language: Language, skill: &str, item: &str) -> Refusal {
    let message = if zh(language) {
        format!("这超出了技能「{skill}」的知识边界：不支持{item}。")
    } else {
        format!("This is outside what the skill `{skill}` covers: it does not support {item}.")
    };
    Refusal { kind: RefusalKind::Boundary, message }
}

/// Two skills fit about equally: which one? Each skill is `(id, short description)`.
pub fn ambiguous(language: Language, a: &(String, String), b: &(String, String)) -> Refusal {
    let ((a, da), (b, db)) = (a, b);
    let message = if zh(language) {
        format!("这个问题可能属于「{a}」（{da}）或「{b}」（{db}）。请问您想问的是哪一个？")
    } else {
        format!("This could be a question for `{a}` ({da}) or `{b}` ({db}). Which one do you mean?")
    };
    Refusal { kind: RefusalKind::Ambiguous, message }
}

/// The conversation has spent its LLM budget.
pub fn llm_budget_spent(language: Language, tokens: usize) -> String {
    if zh(language) {
        format!("本次对话已用完大模型额度（{tokens} 个 token），以下为不经大模型的答案。")
    } else {
        format!("This conversation has used its LLM budget ({tokens} tokens); this is the answer without it.")
    }
}

/// The notice that goes with the extractive (or fixed) answer when the LLM failed.
pub fn llm_failed(language: Language, reason: &str) -> String {
    if zh(language) {
        format!("大模型未能回答（{reason}），以下为不经大模型的答案。")
    } else {
        format!("The LLM could not answer ({reason}); this is the answer without it.")
    }
}

/// Why the model's answer was not used: the citation check kept none of its sentences.
pub fn nothing_supported(language: Language) -> &'static str {
    if zh(language) {
        "模型的回答没有资料支持"
    } else {
        "no sentence of the model's answer is supported by the context"
    }
}

/// The brief reply to a gated request when no LLM writes one. `skills` are `(id, description)`.
pub fn gate_reply(kind: GateKind, language: Language, skills: &[(String, String)]) -> String {
    let ids: Vec<&str> = skills.iter().map(|(id, _)| id.as_str()).collect();
    let list = skill_list(language, &ids);
    match (kind, zh(language)) {
        (GateKind::Chitchat, true) => {
            format!("你好！这个请求不需要查询知识库。我可以回答这些技能范围内的问题：{list}。")
        }
        (GateKind::Chitchat, false) => format!(
            "Hello! This request does not need the knowledge base. I can answer questions covered by these skills: {list}."
        ),
        (GateKind::Rewrite, true) => {
            "改写、翻译、润色这类请求不需要查询知识库；配置 LLM 后即可直接处理。".to_string()
        }
        (GateKind::Rewrite, false) => {
            "Rewriting, translating or polishing text does not need the knowledge base; configure an LLM to have it done."
                .to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_text_follows_the_question_language() {
        let skills = ["labor-law", "tea"];
        assert!(out_of_scope(Language::Chinese, &skills).message.contains("labor-law、tea"));
        assert!(out_of_scope(Language::Other, &skills).message.contains("labor-law, tea"));
        let many: Vec<String> = (1..=1000).map(|i| format!("s{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let zh_many = out_of_scope(Language::Chinese, &many).message;
        assert!(
            zh_many.contains("s1、s2") && zh_many.contains("s8等 1000 个技能") && !zh_many.contains("s9"),
            "{zh_many}"
        );
        let en_many = out_of_scope(Language::Other, &many).message;
        assert!(en_many.ends_with("s7, s8 and 992 more)."), "{en_many}");
        assert_eq!(not_found(Language::Other, "tea").kind, RefusalKind::NotFound);
        assert!(not_found(Language::Chinese, "tea").message.starts_with("知识库中没有找到"));
        assert_eq!(boundary(Language::Other, "tea", "coffee").kind, RefusalKind::Boundary);
        let a = ("a".to_string(), "about a".to_string());
        let b = ("b".to_string(), "about b".to_string());
        let refusal = ambiguous(Language::Other, &a, &b);
        assert!(refusal.message.contains("`a` (about a)") && refusal.message.contains("`b` (about b)"));
        assert!(llm_budget_spent(Language::Chinese, 100).contains("100"));
        assert!(llm_failed(Language::Other, "timeout").contains("(timeout)"));
        let pairs = vec![("tea".to_string(), String::new())];
        assert!(gate_reply(GateKind::Chitchat, Language::Other, &pairs).contains("skills: tea."));
        assert!(gate_reply(GateKind::Rewrite, Language::Chinese, &pairs).contains("LLM"));
    }
}
