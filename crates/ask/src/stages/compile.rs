//! Compile context (docs/design.md §4.7): the retrieved chunks in tier order — rules (must follow),
//! examples, references — under a budget, each labelled `[n]`, with what was dropped recorded.

use crate::base::contract::{Context, ContextPiece};
use skillrag_core::{Hit, Tier};
use skillrag_generate::Generator;

/// How much context fits, and in what unit it is measured.
pub struct Budget<'a> {
    pub limit: usize,
    pub unit: &'static str,
    pub measure: Box<dyn Fn(&str) -> usize + 'a>,
}

impl Budget<'static> {
    /// Characters: without an LLM, or when its tokenizer is not known here.
    pub fn chars(limit: usize) -> Budget<'static> {
        Budget { limit, unit: "chars", measure: Box::new(|text: &str| text.chars().count()) }
    }
}

impl<'a> Budget<'a> {
    /// In a local model's own tokens when it can count them (prompt length is its main cost),
    /// else `chars` characters.
    pub fn for_generator(generator: Option<&'a dyn Generator>, tokens: usize, chars: usize) -> Budget<'a> {
        match generator.filter(|g| g.count_tokens("").is_some()) {
            Some(g) => Budget {
                limit: tokens,
                unit: "tokens",
                measure: Box::new(move |text: &str| g.count_tokens(text).unwrap_or_else(|| text.chars().count())),
            },
            None => Budget::chars(chars),
        }
    }
}

/// Builds the context from `hits` (best first): at most `max_pieces`, at most `per_source` from
/// one document while other documents can fill the places, within the budget.
pub fn compile(hits: &[Hit], max_pieces: usize, per_source: usize, budget: Budget<'_>) -> Context {
    let mut context = Context { budget: budget.limit, unit: budget.unit.into(), ..Default::default() };
    let mut chosen: Vec<&Hit> = Vec::new();
    let mut over: Vec<&Hit> = Vec::new();
    let mut per: std::collections::HashMap<(&str, &str), usize> = std::collections::HashMap::new();
    for hit in hits {
        let count = per.entry((hit.skill.as_str(), hit.source.as_str())).or_default();
        if chosen.len() >= max_pieces {
            context.dropped.push(label(hit));
        } else if *count >= per_source {
            over.push(hit);
        } else {
            *count += 1;
            chosen.push(hit);
        }
    }
    // The limit spreads the context over documents; when there are too few others, the places
    // left go to the best remaining chunks of the same ones (a one-document skill keeps its
    // best chunks instead of two).
    for hit in over {
        if chosen.len() < max_pieces {
            chosen.push(hit);
        } else {
            context.dropped.push(label(hit));
        }
    }
    // Tier order, keeping rank order inside a tier.
    chosen.sort_by_key(|h| tier_rank(h.tier));
    for hit in chosen {
        let size = (budget.measure)(&hit.text);
        if context.used + size > budget.limit && !context.pieces.is_empty() {
            context.dropped.push(label(hit));
            continue;
        }
        context.used += size;
        context.pieces.push(ContextPiece {
            n: context.pieces.len() + 1,
            tier: hit.tier.to_string(),
            skill: hit.skill.clone(),
            source: hit.source.clone(),
            heading: hit.heading.clone(),
            chunk_id: hit.chunk_id,
            text: hit.text.clone(),
            pages: hit.pages,
            summary: hit.summary.clone(),
        });
    }
    context
}

/// The contexts of a compare question's sides (each compiled under its share of the budget), laid
/// side by side: pieces renumbered in order, a piece two sides share kept once. Returns the
/// context and, per side, the indexes of its pieces in it.
pub fn side_by_side(sides: Vec<Context>) -> (Context, Vec<Vec<usize>>) {
    let mut merged = Context::default();
    let mut members = Vec::with_capacity(sides.len());
    for side in sides {
        merged.budget += side.budget;
        merged.used += side.used;
        merged.unit = side.unit;
        merged.dropped.extend(side.dropped);
        let mut own = Vec::with_capacity(side.pieces.len());
        for piece in side.pieces {
            match merged.pieces.iter().position(|p| p.skill == piece.skill && p.chunk_id == piece.chunk_id) {
                Some(shared) => own.push(shared),
                None => {
                    own.push(merged.pieces.len());
                    merged.pieces.push(ContextPiece { n: merged.pieces.len() + 1, ..piece });
                }
            }
        }
        members.push(own);
    }
    (merged, members)
}

fn tier_rank(tier: Tier) -> u8 {
    match tier {
        Tier::Rules => 0,
        Tier::Examples => 1,
        Tier::References => 2,
    }
}

fn label(hit: &Hit) -> String {
    format!("{}/{}#{}", hit.skill, hit.source, hit.ordinal)
}

/// The context as prompt text: `[n] source › heading`, the document summary of a long
/// document, then the chunk.
pub fn render(context: &Context) -> String {
    context.pieces.iter().map(|p| render_piece(p, "", &p.text)).collect::<Vec<_>>().join("\n\n")
}

/// One piece: `[n] {prefix}skill/source › heading`, the document summary, then `text`.
pub(crate) fn render_piece(p: &ContextPiece, prefix: &str, text: &str) -> String {
    let heading = if p.heading.is_empty() { String::new() } else { format!(" › {}", p.heading) };
    let summary = p.summary.as_ref().map(|s| format!("({s})\n")).unwrap_or_default();
    format!("[{}] {prefix}{}{heading}\n{summary}{text}", p.n, skillrag_core::cited_path(&p.skill, &p.location()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillrag_core::{DocType, HitRanks, HitScores};

    fn hit(source: &str, tier: Tier, text: &str) -> Hit {
        Hit {
            skill: "s".into(),
            source: source.into(),
            heading: "H".into(),
            ordinal: 0,
            text: text.into(),
            scores: HitScores::default(),
            ranks: HitRanks::default(),
            chunk_id: 0,
            title: String::new(),
            span: (0, 1),
            doc_type: DocType::General,
            tier,
            pages: None,
            summary: None,
        }
    }

    #[test]
    fn tiers_budget_and_caps() {
        let hits = vec![
            hit("a.md", Tier::References, "aaaa"),
            hit("a.md", Tier::References, "bbbb"),
            hit("a.md", Tier::References, "cccc"),
            hit("rules/r.md", Tier::Rules, "rule"),
            hit("b.md", Tier::Examples, "example text that is long"),
        ];
        let c = compile(&hits, 4, 2, Budget::chars(20));
        let order: Vec<&str> = c.pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(order, vec!["rule", "aaaa", "bbbb"], "two per document while others fill the places");
        assert_eq!(c.pieces.iter().map(|p| p.n).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(c.dropped, vec!["s/a.md#0", "s/b.md#0"]);
        assert!(c.used <= 20);
        assert!(render(&c).starts_with("[1] s/rules/r.md › H\nrule"));
        // Places no other document fills go to the same document's next chunks.
        let c = compile(&hits[..3], 4, 2, Budget::chars(20));
        assert_eq!(c.pieces.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), vec!["aaaa", "bbbb", "cccc"]);
    }

    /// Counts whitespace-separated words as its tokens.
    struct Words;

    impl Generator for Words {
        fn describe(&self) -> String {
            "words".into()
        }
        fn generate(
            &self,
            _: &skillrag_generate::ChatRequest,
            _: skillrag_generate::OnPiece<'_>,
        ) -> Result<skillrag_generate::Generation, skillrag_generate::GenerateError> {
            Err(skillrag_generate::GenerateError::Inference("not used".into()))
        }
        fn count_tokens(&self, text: &str) -> Option<usize> {
            Some(text.split_whitespace().count())
        }
    }

    #[test]
    fn the_budget_is_in_the_model_tokens_when_it_counts_them() {
        let tokens = Budget::for_generator(Some(&Words), 3, 100);
        assert_eq!((tokens.unit, tokens.limit, (tokens.measure)("one two three four")), ("tokens", 3, 4));
        let chars = Budget::for_generator(None, 3, 100);
        assert_eq!((chars.unit, chars.limit, (chars.measure)("one two")), ("chars", 100, 7));
        let hits = vec![hit("a.md", Tier::References, "one two"), hit("b.md", Tier::References, "three four")];
        let c = compile(&hits, 10, 2, Budget::for_generator(Some(&Words), 3, 100));
        assert_eq!((c.pieces.len(), c.used, c.unit.as_str()), (1, 2, "tokens"));
        assert_eq!(c.dropped, vec!["s/b.md#0"]);
    }
}
