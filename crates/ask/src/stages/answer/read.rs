//! The reader over the extractive answer's candidates (docs/design.md §4.9): the candidates are
//! judged in order, best first, and the one the reader rates highest is the answer when it
//! accepts it — answer selection by verification, so the answer is still quoted verbatim with its
//! citation. None accepted: the question is refused. Judging stops at a candidate it is sure of,
//! and after the first when that one is hopeless (unless passages are judged too).

use crate::base::contract::{Citation, ReaderInfo};
use crate::reader::Reader;

/// An extractive answer: its text and its citations.
pub type Extracted = (String, Vec<Citation>);

/// The candidate the reader accepts (`None`: it accepted none, or it failed on weak evidence),
/// and what it did. `weak`: the lexical evidence was below its threshold, so without the reader's
/// acceptance nothing is answered; with strong evidence a failing reader leaves the first
/// candidate standing.
pub fn select(
    reader: &Reader,
    question: &str,
    candidates: Vec<Extracted>,
    weak: bool,
) -> (Option<Extracted>, ReaderInfo) {
    let mut info = ReaderInfo { model: reader.describe(), weak_evidence: weak, ..Default::default() };
    let mut chosen: Option<(usize, f32)> = None;
    for (i, candidate) in candidates.iter().enumerate().take(reader.max_calls + reader.passages) {
        match reader.judge(question, &candidate.0) {
            Ok(verdict) => {
                info.ms += verdict.ms;
                info.verdicts.push(verdict.p_answers);
                if reader.accepts(&verdict) && chosen.is_none_or(|(_, p)| verdict.p_answers > p) {
                    chosen = Some((i, verdict.p_answers));
                }
                // Passages, when judged, are there for the answers the candidates miss: a hopeless
                // first candidate does not skip them.
                let hopeless = i == 0 && reader.passages == 0 && reader.is_hopeless(&verdict);
                if reader.is_sure(&verdict) || hopeless {
                    break;
                }
            }
            Err(e) => {
                info.error = Some(e.to_string());
                break;
            }
        }
    }
    let chosen = chosen.map(|(i, _)| i);
    let failed = info.error.is_some() && chosen.is_none();
    info.decision = match (chosen, failed) {
        (Some(_), _) => "answered",
        (None, true) => "failed",
        (None, false) => "refused",
    }
    .into();
    info.chosen = chosen.map(|i| i + 1);
    let pick = match (chosen, failed && !weak) {
        (Some(i), _) => candidates.into_iter().nth(i),
        // The reader could not be asked: the lexical decision stands.
        (None, true) => candidates.into_iter().next(),
        (None, false) => None,
    };
    (pick, info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::scripted::Scripted;
    use std::sync::Arc;

    /// A reader whose verdicts are P(yes) for each call in turn; `None` fails.
    fn reader(script: &[Option<f32>]) -> Reader {
        reader_with_passages(script, 0)
    }

    fn reader_with_passages(script: &[Option<f32>], passages: usize) -> Reader {
        let script: Vec<Option<[f32; 4]>> = script.iter().map(|p| p.map(|p| [p, 1.0 - p, 0.0, 0.0])).collect();
        Reader::new(Arc::new(Scripted::new(&script)), 0.5, 3, passages, 0.5)
    }

    fn candidates(n: usize) -> Vec<Extracted> {
        (1..=n).map(|i| (format!("answer {i}[1]"), vec![])).collect()
    }

    #[test]
    fn the_candidate_rated_highest_is_the_answer_and_a_sure_one_ends_the_judging() {
        let (pick, info) = select(&reader(&[Some(0.6), Some(0.75), Some(0.3)]), "q", candidates(3), false);
        assert_eq!(pick.map(|p| p.0).as_deref(), Some("answer 2[1]"));
        assert_eq!((info.decision.as_str(), info.chosen, info.verdicts.len()), ("answered", Some(2), 3));
        let (pick, info) = select(&reader(&[Some(0.2), Some(0.9)]), "q", candidates(3), false);
        assert_eq!(pick.map(|p| p.0).as_deref(), Some("answer 2[1]"));
        assert_eq!((info.chosen, info.verdicts.len()), (Some(2), 2), "sure of the second: the third is not judged");
    }

    #[test]
    fn none_accepted_is_a_refusal_and_the_calls_are_bounded() {
        let (pick, info) = select(&reader(&[Some(0.3), Some(0.2), Some(0.3), Some(0.9)]), "q", candidates(5), false);
        assert_eq!(pick, None);
        assert_eq!((info.decision.as_str(), info.verdicts.len()), ("refused", 3));
    }

    #[test]
    fn a_hopeless_first_verdict_ends_the_judging_a_later_low_one_does_not() {
        let (pick, info) = select(&reader(&[Some(0.1), Some(0.9)]), "q", candidates(3), false);
        assert_eq!((pick, info.decision.as_str(), info.verdicts.len()), (None, "refused", 1));
        let (pick, info) = select(&reader(&[Some(0.3), Some(0.1), Some(0.6)]), "q", candidates(3), false);
        assert_eq!(pick.map(|p| p.0).as_deref(), Some("answer 3[1]"));
        assert_eq!(info.verdicts.len(), 3);
    }

    #[test]
    fn passages_after_the_candidates_are_judged_within_their_own_calls() {
        // A hopeless first candidate does not skip the passages.
        let script = [Some(0.1), Some(0.2), Some(0.3), Some(0.4), Some(0.7), Some(0.9)];
        let (pick, info) = select(&reader_with_passages(&script, 2), "q", candidates(6), false);
        assert_eq!(pick.map(|p| p.0).as_deref(), Some("answer 5[1]"));
        assert_eq!((info.chosen, info.verdicts.len()), (Some(5), 5), "3 candidates + 2 passages");
    }

    #[test]
    fn a_failing_reader_leaves_strong_evidence_answered_and_weak_evidence_refused() {
        let (pick, info) = select(&reader(&[None]), "q", candidates(2), false);
        assert_eq!(pick.map(|p| p.0).as_deref(), Some("answer 1[1]"));
        assert_eq!(info.decision, "failed");
        assert!(info.error.is_some());
        let (pick, info) = select(&reader(&[None]), "q", candidates(2), true);
        assert_eq!((pick, info.decision.as_str()), (None, "failed"));
    }
}
