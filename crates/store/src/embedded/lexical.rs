//! The BM25 half of the embedded store: a tantivy index whose text field is analyzed by the
//! project analyzer ([`skillrag_text::tokens`]).
//!
//! Queries are built from the analyzer's terms directly — one SHOULD clause per distinct term —
//! never with tantivy's `QueryParser`, which turns unbroken Chinese into a phrase query over
//! jieba's overlapping sub-words and then matches nothing.

use crate::StoreError;
use skillrag_core::{ChunkId, Scored};
use std::collections::HashSet;
use std::path::Path;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, PhraseQuery, Query, TermQuery, TermSetQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STRING};
use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

const TOKENIZER: &str = "skillrag";

/// tantivy adapter for the project analyzer.
#[derive(Clone, Default)]
pub struct AnalyzerTokenizer;

pub struct AnalyzerStream {
    tokens: Vec<skillrag_text::Token>,
    next: usize,
    token: Token,
}

impl Tokenizer for AnalyzerTokenizer {
    type TokenStream<'a> = AnalyzerStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> AnalyzerStream {
        AnalyzerStream { tokens: skillrag_text::tokens(text), next: 0, token: Token::default() }
    }
}

impl TokenStream for AnalyzerStream {
    fn advance(&mut self) -> bool {
        let Some(t) = self.tokens.get(self.next) else { return false };
        self.token = Token {
            offset_from: t.start,
            offset_to: t.end,
            position: self.next,
            text: t.term.clone(),
            position_length: 1,
        };
        self.next += 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[derive(Clone, Copy)]
pub struct Fields {
    pub chunk_id: Field,
    pub source: Field,
    pub text: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let chunk_id = b.add_u64_field("chunk_id", INDEXED | FAST);
    let source = b.add_text_field("source", STRING);
    let text_options = TextOptions::default().set_indexing_options(
        // Positions: routing counts the knowledge's phrases (adjacent terms), see `phrase_doc_freqs`.
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let text = b.add_text_field("text", text_options);
    (b.build(), Fields { chunk_id, source, text })
}

fn register(index: &Index) {
    index.tokenizers().register(TOKENIZER, TextAnalyzer::from(AnalyzerTokenizer));
}

fn fields_of(index: &Index) -> Result<Fields, StoreError> {
    let schema = index.schema();
    let get = |name: &str| schema.get_field(name).map_err(StoreError::from);
    Ok(Fields { chunk_id: get("chunk_id")?, source: get("source")?, text: get("text")? })
}

/// An open BM25 index for reading.
pub struct LexicalIndex {
    reader: IndexReader,
    fields: Fields,
}

impl LexicalIndex {
    pub fn open(dir: &Path) -> Result<LexicalIndex, StoreError> {
        let index = Index::open_in_dir(dir)?;
        register(&index);
        let fields = fields_of(&index)?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(LexicalIndex { reader, fields })
    }

    /// How many chunks contain each term.
    pub fn doc_freqs(&self, terms: &[String]) -> Result<Vec<u64>, StoreError> {
        let searcher = self.reader.searcher();
        terms.iter().map(|t| Ok(searcher.doc_freq(&Term::from_field_text(self.fields.text, t))?)).collect()
    }

    /// How many chunks contain each pair of terms side by side; `None` for an index written
    /// without positions (before format 2), which is rebuilt by the next `index`.
    pub fn phrase_doc_freqs(&self, pairs: &[(String, String)]) -> Result<Option<Vec<u64>>, StoreError> {
        let searcher = self.reader.searcher();
        let has_positions = searcher.schema().get_field_entry(self.fields.text).field_type().get_index_record_option()
            == Some(IndexRecordOption::WithFreqsAndPositions);
        if !has_positions {
            return Ok(None);
        }
        let term = |t: &str| Term::from_field_text(self.fields.text, t);
        pairs
            .iter()
            .map(|(a, b)| Ok(searcher.search(&PhraseQuery::new(vec![term(a), term(b)]), &Count)? as u64))
            .collect::<Result<Vec<u64>, StoreError>>()
            .map(Some)
    }

    /// BM25 top `limit` for the analyzed `terms`, optionally only within `allowed` sources.
    pub fn search(
        &self,
        terms: &[String],
        limit: usize,
        allowed: Option<&HashSet<String>>,
    ) -> Result<Vec<Scored>, StoreError> {
        let mut seen = HashSet::new();
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .filter(|t| seen.insert(t.as_str()))
            .map(|t| {
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(Term::from_field_text(self.fields.text, t), IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        if clauses.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let text_query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        let query: Box<dyn Query> = match allowed {
            None => text_query,
            Some(sources) => {
                let terms = sources.iter().map(|s| Term::from_field_text(self.fields.source, s));
                // The filter must not change scores: it contributes a constant 0.
                let filter: Box<dyn Query> = Box::new(ConstScoreQuery::new(Box::new(TermSetQuery::new(terms)), 0.0));
                Box::new(BooleanQuery::new(vec![(Occur::Must, text_query), (Occur::Must, filter)]))
            }
        };
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (score, address) in top {
            let column = searcher.segment_reader(address.segment_ord).fast_fields().u64("chunk_id")?;
            if let Some(id) = column.first(address.doc_id) {
                out.push(Scored { id, score });
            }
        }
        Ok(out)
    }
}

/// The segment files of the tantivy index in `dir` that fail tantivy's own footer checksums.
pub fn damaged_files(dir: &Path) -> Result<Vec<String>, StoreError> {
    let index = Index::open_in_dir(dir)?;
    let mut damaged: Vec<String> = index.validate_checksum()?.iter().map(|p| p.display().to_string()).collect();
    damaged.sort();
    Ok(damaged)
}

/// Writes a generation's BM25 index: either fresh, or continuing the previous generation's
/// segments (hard-linked, so the old generation is untouched) with changed sources deleted.
pub struct LexicalWriter {
    writer: IndexWriter,
    fields: Fields,
}

/// Memory for tantivy's indexing buffer.
const WRITER_HEAP: usize = 64 * 1024 * 1024;

/// One indexing thread and one merge thread: a skill's index is written once per generation, and
/// with hundreds of small skills tantivy's default four merge threads per writer cost more than
/// the indexing itself (thread start-up and hand-offs, ~14 ms a skill).
fn writer(index: &Index) -> Result<IndexWriter, StoreError> {
    let options = tantivy::indexer::IndexWriterOptions::builder()
        .num_worker_threads(1)
        .num_merge_threads(1)
        .memory_budget_per_thread(WRITER_HEAP)
        .build();
    Ok(index.writer_with_options(options)?)
}

impl LexicalWriter {
    pub fn create(dir: &Path) -> Result<LexicalWriter, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema)?;
        register(&index);
        let writer = writer(&index)?;
        Ok(LexicalWriter { writer, fields })
    }

    /// Continues from `previous` (a tantivy folder) by hard-linking its files into `dir`.
    /// Fails (and the caller rebuilds) when the file system cannot hard-link.
    pub fn continue_from(previous: &Path, dir: &Path) -> Result<LexicalWriter, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        for entry in std::fs::read_dir(previous).map_err(|e| StoreError::io(previous, e))? {
            let entry = entry.map_err(|e| StoreError::io(previous, e))?;
            let name = entry.file_name();
            // Lock files belong to the old folder.
            if name.to_string_lossy().starts_with(".tantivy") {
                continue;
            }
            std::fs::hard_link(entry.path(), dir.join(&name)).map_err(|e| StoreError::io(entry.path(), e))?;
        }
        let index = Index::open_in_dir(dir)?;
        register(&index);
        let fields = fields_of(&index)?;
        let writer = writer(&index)?;
        Ok(LexicalWriter { writer, fields })
    }

    pub fn delete_source(&mut self, source: &str) {
        self.writer.delete_term(Term::from_field_text(self.fields.source, source));
    }

    pub fn add(&mut self, id: ChunkId, source: &str, indexed_text: &str) -> Result<(), StoreError> {
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.fields.chunk_id, id);
        doc.add_text(self.fields.source, source);
        doc.add_text(self.fields.text, indexed_text);
        self.writer.add_document(doc)?;
        Ok(())
    }

    pub fn commit(mut self) -> Result<(), StoreError> {
        self.writer.commit()?;
        self.writer.wait_merging_threads()?;
        Ok(())
    }
}
