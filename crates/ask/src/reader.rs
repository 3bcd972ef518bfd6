//! The reader (docs/design.md §4.9): a small local instruction model that reads the text an answer
//! would show and says whether it answers the question. This is the retrieval evaluator of
//! Corrective RAG (Yan et al., 2024) and the "is it supported" critique of Self-RAG (Asai et al.,
//! 2024), applied to the quoted answer itself: the verdict is read from the model's next-token
//! probabilities of "yes" and "no" (no text is generated, so nothing is parsed or invented), and
//! the answer it accepts is quoted verbatim from the knowledge.

use skillrag_generate::{GenerateError, Generator, Message};
use std::sync::Arc;
use std::time::Instant;

/// Passages longer than this are cut for the reader: reading the prompt is most of its time on a
/// CPU (about 100 tokens a second on two cores), and the answer a user reads is rarely longer.
pub const MAX_PASSAGE_CHARS: usize = 900;

/// The instruction. Without its second and third sentences the 1.5B reader says "yes" to a
/// passage about a neighbouring item (white tea for a question about green tea: P(yes) 0.50 →
/// 0.19); a server that caches prompt prefixes reads it once.
const SYSTEM: &str = "You check whether a passage answers a question. Answer yes only if the passage itself \
states the answer to exactly this question. If the passage is about something else (another product, item, \
person or topic), answer no. Reply with one word: yes or no.";

/// P(yes) at which a candidate is taken without judging the rest.
const SURE: f32 = 0.8;

/// P(yes) of the first candidate below which the rest are not judged (early rejection, as in a
/// cascade). On dev v2 and its leave-gold-out variant 66 of 606 judged questions fall below it;
/// judging their other candidates answered one more with the fact, one without it and one
/// unanswerable question, for 128 more calls (`bench/results/reader-prompts.md`).
const HOPELESS: f32 = 0.2;

/// The reader and the probability above which its "yes" is taken.
pub struct Reader {
    model: Arc<dyn Generator>,
    /// The decision threshold on P(the passage answers). 0.5 is the Bayes decision for a
    /// calibrated yes/no with equal costs.
    pub threshold: f32,
    /// Most extractive candidates judged for one question.
    pub max_calls: usize,
    /// The first retrieved passages judged as answers of their own after the candidates; a
    /// question costs at most `max_calls + passages` calls.
    pub passages: usize,
    /// Evidence below the fitted threshold but at least this share of it is kept for the reader
    /// to judge (it must then accept an answer); 1 = only answers the evidence accepts are judged.
    pub band: f32,
}

/// The reader's verdict on one candidate answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// P(the passage answers the question), renormalised over yes and no.
    pub p_answers: f32,
    pub ms: f64,
}

impl Reader {
    pub fn new(model: Arc<dyn Generator>, threshold: f32, max_calls: usize, passages: usize, band: f32) -> Reader {
        Reader { model, threshold, max_calls: max_calls.max(1), passages, band: band.clamp(0.0, 1.0) }
    }

    /// The model, to hand on when the project is reopened.
    pub fn model(&self) -> &Arc<dyn Generator> {
        &self.model
    }

    pub fn describe(&self) -> String {
        self.model.describe()
    }

    /// Whether `passage` states the answer to `question`.
    pub fn judge(&self, question: &str, passage: &str) -> Result<Verdict, GenerateError> {
        let started = Instant::now();
        let messages = [Message::system(SYSTEM), Message::user(prompt(question, passage))];
        // The model may reply in the question's language: 是/否 count as yes/no.
        let choice = self.model.choose(&messages, &["yes", "no", "是", "否"])?;
        let p = &choice.probabilities;
        let (yes, no) = (p[0] + p[2], p[1] + p[3]);
        let p_answers = if yes + no > 0.0 { yes / (yes + no) } else { 0.0 };
        Ok(Verdict { p_answers, ms: started.elapsed().as_secs_f64() * 1000.0 })
    }

    pub fn accepts(&self, verdict: &Verdict) -> bool {
        verdict.p_answers >= self.threshold
    }

    /// A verdict sure enough that judging the next candidates would not change the choice.
    /// On the demo the passages that answer score 0.74–0.96, while a neighbour's passage accepted
    /// first (the glass-cup steps for green tea's temperature) scored 0.57: below this, the other
    /// candidates are judged too and the best one is taken.
    pub fn is_sure(&self, verdict: &Verdict) -> bool {
        verdict.p_answers >= SURE.max(self.threshold)
    }

    /// A first verdict so low that the next candidates are not worth judging.
    pub fn is_hopeless(&self, verdict: &Verdict) -> bool {
        verdict.p_answers < HOPELESS.min(self.threshold)
    }
}

/// The user turn: the passage first, so a server that caches prompt prefixes (llama.cpp) reuses
/// the instruction, and the question last, next to the reply it asks for.
fn prompt(question: &str, passage: &str) -> String {
    let passage = cut(passage, MAX_PASSAGE_CHARS);
    format!("Passage:\n{passage}\n\nQuestion: {question}\n\nDoes the passage state the answer to the question?")
}

fn cut(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// A scripted reader model for tests: each judgement gets the next weights of yes/no/是/否
/// (`None`: the call fails); the prompts are kept.
#[cfg(test)]
pub(crate) mod scripted {
    use skillrag_generate::{ChatRequest, Choice, GenerateError, Generation, Generator, Message, OnPiece};
    use std::sync::Mutex;
    use std::time::Duration;

    #[derive(Default)]
    pub struct Scripted {
        pub script: Mutex<Vec<Option<[f32; 4]>>>,
        pub prompts: Mutex<Vec<String>>,
    }

    impl Scripted {
        pub fn new(script: &[Option<[f32; 4]>]) -> Scripted {
            Scripted { script: Mutex::new(script.to_vec()), prompts: Mutex::default() }
        }
    }

    impl Generator for Scripted {
        fn describe(&self) -> String {
            "scripted".into()
        }
        fn generate(&self, _: &ChatRequest, _: OnPiece<'_>) -> Result<Generation, GenerateError> {
            Err(GenerateError::Inference("not used".into()))
        }
        fn choose(&self, messages: &[Message], choices: &[&str]) -> Result<Choice, GenerateError> {
            assert_eq!(choices.len(), 4);
            self.prompts.lock().unwrap().push(messages[1].content.clone());
            let weights =
                self.script.lock().unwrap().remove(0).ok_or_else(|| GenerateError::Inference("down".into()))?;
            Ok(Choice::from_weights(weights.to_vec(), 10, Duration::ZERO).unwrap())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scripted::Scripted;
    use super::*;

    fn reader(weights: [f32; 4]) -> (Reader, Arc<Scripted>) {
        let model = Arc::new(Scripted::new(&[Some(weights)]));
        (Reader::new(model.clone(), 0.5, 3, 0, 0.5), model)
    }

    #[test]
    fn the_verdict_pools_the_spellings_of_yes_and_no() {
        // yes 0.2 + 是 0.4 against no 0.1 + 否 0.1.
        let (sure, _) = reader([0.2, 0.1, 0.4, 0.1]);
        let verdict = sure.judge("q", "p").unwrap();
        assert!((verdict.p_answers - 0.75).abs() < 1e-6, "{verdict:?}");
        assert!(sure.accepts(&verdict));
        let (doubtful, _) = reader([0.1, 0.6, 0.0, 0.3]);
        assert!(!doubtful.accepts(&doubtful.judge("q", "p").unwrap()));
    }

    #[test]
    fn a_long_passage_is_cut_and_the_question_comes_last() {
        let (judge, model) = reader([1.0, 0.0, 0.0, 0.0]);
        let passage = "很长的段落。".repeat(400);
        judge.judge("几天？", &passage).unwrap();
        let prompt = model.prompts.lock().unwrap()[0].clone();
        assert!(prompt.chars().count() < MAX_PASSAGE_CHARS + 200, "{}", prompt.chars().count());
        assert!(prompt.contains("Question: 几天？"));
        assert!(prompt.starts_with("Passage:\n很长的段落。"));
    }
}
