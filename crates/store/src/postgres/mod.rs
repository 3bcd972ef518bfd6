//! The PostgreSQL + pgvector store: the same generations, BM25 and dense retrieval as the
//! embedded store, on a database engine that operators already replicate, back up and shard.
//!
//! ```text
//! skillrag_schema(version)                      the layout version (SCHEMA_VERSION)
//! skillrag_skills(skill, part, generation, meta, manifest, chunk_count, token_count, …)
//! skillrag_chunks(skill, id, born, died, source, chunk, terms, tfs, len, tokens, embedding, visibility)
//!     PARTITION BY LIST (skill): one partition `skillrag_chunks_p<part>` per skill, with a
//!     GIN index on `terms` and an HNSW index (`vector_cosine_ops`) per embedding dimension
//! ```
//!
//! **Generations without copies.** A row is visible in generation `g` when
//! `born <= g AND (died IS NULL OR died > g)`. A re-index adds rows born in the next generation
//! and marks the rows of changed or deleted sources as dying in it; kept sources are not
//! touched, so an incremental re-index writes only what changed. The writer does all of this
//! in one transaction and, last, moves `skillrag_skills.generation`: the commit is the atomic
//! switch, and a crashed or interrupted writer leaves nothing behind. Readers pinned to the
//! previous generation keep seeing its rows; rows no longer visible to the current generation
//! or the one before it are deleted at commit, as the embedded store deletes old folders.
//!
//! **BM25 in SQL.** Each row stores the project analyzer's distinct terms and their
//! frequencies, computed in Rust, so both stores tokenize alike. Scores use tantivy's BM25
//! (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5)), lengths rounded as tantivy
//! rounds them) over the generation's own statistics: N and the total token count are stored
//! at commit, document frequencies are counted through the GIN index and cached per opened
//! generation (a generation never changes).
//!
//! Tables live in the first schema of the connection's `search_path` (libpq's
//! `options=-csearch_path=…` picks another), which is created when missing.

mod index;
mod writer;

pub use index::PgSkillIndex;

use crate::{IndexMeta, IndexWriter, SkillIndex, Store, StoreError};
use postgres::{Client, NoTls};
use r2d2_postgres::PostgresConnectionManager;
use std::sync::Arc;
use std::time::Duration;

/// Bumped when the tables change; a database at another version is refused with a message.
pub const SCHEMA_VERSION: i32 = 1;

/// The key of a transaction-level advisory lock: `skill` = None guards creating tables and
/// partitions, `Some(skill)` makes the skill's writer exclusive. Keys include the schema, so
/// projects (or tests) in different schemas of one database do not wait for each other.
pub(crate) const LOCK_KEY: &str = "hashtextextended('skillrag/' || coalesce(current_schema(), '') || '/' || $1, 0)";

type Pool = r2d2::Pool<PostgresConnectionManager<NoTls>>;
type Conn = r2d2::PooledConnection<PostgresConnectionManager<NoTls>>;

/// Connection pool settings.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Most connections one process holds.
    pub max_size: u32,
    /// How long a query waits for a free connection (or for the database to answer a
    /// connect) before it fails with [`StoreError::Unavailable`] instead of hanging.
    pub wait: Duration,
    /// `hnsw.ef_search`: candidates an HNSW scan keeps; higher is slower and closer to exact.
    pub ef_search: u32,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions { max_size: 16, wait: Duration::from_secs(10), ef_search: 100 }
    }
}

/// Is `store` (the `store` setting) a PostgreSQL connection URL?
pub fn is_postgres_url(store: &str) -> bool {
    store.starts_with("postgres://") || store.starts_with("postgresql://")
}

/// `url` without its password (in the user part or a `password=` parameter), for messages.
pub fn redact(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let base = match base.split_once("://").and_then(|(scheme, rest)| Some((scheme, rest.split_once('@')?))) {
        Some((scheme, (userinfo, host))) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => base.to_string(),
        },
        None => base.to_string(),
    };
    match query {
        None => base,
        Some(q) => {
            let params: Vec<String> = q
                .split('&')
                .map(|p| if p.starts_with("password=") { "password=***".to_string() } else { p.to_string() })
                .collect();
            format!("{base}?{}", params.join("&"))
        }
    }
}

/// The connection pool, shared by the store and the generations it opens.
#[derive(Clone)]
pub(crate) struct Connections {
    pool: Arc<ClosedOffThread>,
    /// For messages: the URL without its password.
    url: String,
}

/// Owns the pool and closes its connections on a thread of its own. Closing a `postgres`
/// connection blocks on its runtime, which panics on an async executor thread — and the last
/// holder of a served generation is often dropped there (the server swaps generations while
/// requests still finish on the old one).
struct ClosedOffThread(Option<Pool>);

impl Drop for ClosedOffThread {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            std::thread::spawn(move || drop(pool));
        }
    }
}

impl Connections {
    fn pool(&self) -> &Pool {
        // Always Some until dropped.
        self.pool.0.as_ref().expect("pool present until drop")
    }

    /// A pooled connection; waits at most the pool's timeout, so a busy pool is an error, not a hang.
    pub(crate) fn get(&self) -> Result<Conn, StoreError> {
        let pool = self.pool();
        pool.get().map_err(|e| {
            StoreError::Unavailable(format!(
                "no PostgreSQL connection available from {} within {:?} (pool of {}): {e}",
                self.url,
                pool.connection_timeout(),
                pool.max_size()
            ))
        })
    }
}

/// The store on PostgreSQL with pgvector, selected by `store = "postgres://…"`.
pub struct PostgresStore {
    db: Connections,
    config: postgres::Config,
    /// A hot standby: reads work, writes are refused up front with a clear message.
    read_only: bool,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("url", &self.db.url).field("read_only", &self.read_only).finish()
    }
}

/// The message of a database error (with its detail), or of the connection failure.
pub(crate) fn db_error(context: &str, e: postgres::Error) -> StoreError {
    if let Some(db) = e.as_db_error() {
        if db.code() == &postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION {
            return StoreError::ReadOnly(format!("{context}: {}", db.message()));
        }
        // Class 08 (connection exception) and 57 (operator intervention: shutdown, restart,
        // terminated backend): the database went away, not the request.
        if db.code().code().starts_with("08") || db.code().code().starts_with("57") {
            return StoreError::Unavailable(format!("{context}: PostgreSQL unavailable: {}", db.message()));
        }
        let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
        return StoreError::Database(format!("{context}: {}{detail}", db.message()));
    }
    // No database answer at all: the connection is closed, or the socket failed (an I/O error).
    let io = std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
    if e.is_closed() || io {
        return StoreError::Unavailable(format!("{context}: PostgreSQL connection lost: {e}"));
    }
    StoreError::Database(format!("{context}: {e}"))
}

impl PostgresStore {
    pub fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        Self::connect_with(url, PoolOptions::default())
    }

    /// Connects, checks the schema version, and creates the tables on first use (on a primary).
    pub fn connect_with(url: &str, options: PoolOptions) -> Result<PostgresStore, StoreError> {
        let shown = redact(url);
        let mut config: postgres::Config =
            url.parse().map_err(|e| StoreError::Invalid(format!("store URL `{shown}`: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.wait);
        }
        if config.get_application_name().is_none() {
            config.application_name("skillrag");
        }
        let ef_search = options.ef_search.max(1);
        let manager = PostgresConnectionManager::new(config.clone(), NoTls);
        let pool = r2d2::Pool::builder()
            .max_size(options.max_size.max(1))
            .min_idle(Some(1))
            .connection_timeout(options.wait)
            .connection_customizer(Box::new(SessionSettings { ef_search }))
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build(manager)
            .map_err(|e| StoreError::Unavailable(format!("cannot connect to PostgreSQL at {shown}: {e}")))?;
        let mut store = PostgresStore {
            db: Connections { pool: Arc::new(ClosedOffThread(Some(pool))), url: shown },
            config,
            read_only: false,
        };
        let mut conn = store.conn()?;
        let row = conn
            .query_one("SELECT pg_is_in_recovery()", &[])
            .map_err(|e| db_error("checking for a read replica", e))?;
        store.read_only = row.get(0);
        schema_check(&mut conn, store.read_only, &store.db.url)?;
        drop(conn);
        Ok(store)
    }

    pub fn url(&self) -> &str {
        &self.db.url
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub(crate) fn conn(&self) -> Result<Conn, StoreError> {
        self.db.get()
    }

    /// A dedicated connection outside the pool, for a writer's long transaction.
    fn dedicated(&self) -> Result<Client, StoreError> {
        self.config
            .connect(NoTls)
            .map_err(|e| StoreError::Unavailable(format!("cannot connect to PostgreSQL at {}: {e}", self.db.url)))
    }

    fn refuse_writes(&self, what: &str) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::ReadOnly(format!(
                "cannot {what}: {} is a read-only replica (hot standby); run `skillrag index` against the \
                 primary, and this server serves the new generation once it has replicated",
                self.db.url
            )));
        }
        Ok(())
    }

    /// The partition number of `skill`, if the skill has rows or a published generation.
    fn part_of(conn: &mut impl postgres::GenericClient, skill: &str) -> Result<Option<i64>, StoreError> {
        let row = conn
            .query_opt("SELECT part FROM skillrag_skills WHERE skill = $1", &[&skill])
            .map_err(|e| db_error("reading skillrag_skills", e))?;
        Ok(row.map(|r| r.get(0)))
    }
}

/// Per-connection settings, applied when the pool opens a connection.
#[derive(Debug)]
struct SessionSettings {
    ef_search: u32,
}

impl r2d2::CustomizeConnection<Client, postgres::Error> for SessionSettings {
    fn on_acquire(&self, conn: &mut Client) -> Result<(), postgres::Error> {
        // Iterative scans keep an HNSW scan going when the generation filter drops rows, so a
        // filtered search still returns `limit` rows (pgvector ≥ 0.8; older versions ignore it
        // with a warning through the unknown-setting path, so it is set leniently).
        // Only raised: a larger value set on the database or role (`ALTER ROLE … SET
        // hnsw.ef_search = 200`) is kept, for more recall on large skills.
        conn.batch_execute(&format!(
            "SELECT set_config('hnsw.ef_search', '{ef}', false)
             WHERE coalesce(nullif(current_setting('hnsw.ef_search', true), ''), '0')::int < {ef}",
            ef = self.ef_search
        ))?;
        let _ = conn.batch_execute("SET hnsw.iterative_scan = relaxed_order");
        Ok(())
    }
}

/// The first schema of `search_path`, created when missing (so `options=-csearch_path=x,public`
/// gives a project, or a test, tables of its own).
fn ensure_search_schema(conn: &mut Conn) -> Result<(), StoreError> {
    let path: String = conn.query_one("SHOW search_path", &[]).map_err(|e| db_error("reading search_path", e))?.get(0);
    let first = path.split(',').next().unwrap_or("").trim().trim_matches('"');
    if first.is_empty() || first == "$user" {
        return Ok(());
    }
    let exists: bool = conn
        .query_one("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", &[&first])
        .map_err(|e| db_error("reading schemas", e))?
        .get(0);
    if !exists {
        conn.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", quote_ident(first)))
            .map_err(|e| db_error(&format!("creating schema {first}"), e))?;
    }
    Ok(())
}

/// Checks the schema version; on a primary, creates the tables when there are none.
fn schema_check(conn: &mut Conn, read_only: bool, url: &str) -> Result<(), StoreError> {
    let found = schema_version(conn)?;
    match found {
        Some(v) if v == SCHEMA_VERSION => Ok(()),
        Some(v) => Err(StoreError::SchemaVersion {
            found: v,
            expected: SCHEMA_VERSION,
            detail: format!(
                "the skillrag tables at {url} are at schema version {v}, this build uses {SCHEMA_VERSION}: \
                 copy the indexes out with the skillrag version that wrote them (`skillrag migrate --to embedded`), \
                 drop the skillrag_* tables, then `skillrag migrate --to {url}` with this version"
            ),
        }),
        None if read_only => Err(StoreError::ReadOnly(format!(
            "{url} is a read-only replica and has no skillrag tables yet: index through the primary first"
        ))),
        None => create_schema(conn),
    }
}

fn schema_version(conn: &mut Conn) -> Result<Option<i32>, StoreError> {
    let table: Option<String> = conn
        .query_one("SELECT to_regclass('skillrag_schema')::text", &[])
        .map_err(|e| db_error("checking the skillrag schema", e))?
        .get(0);
    if table.is_none() {
        return Ok(None);
    }
    let row = conn
        .query_opt("SELECT version FROM skillrag_schema LIMIT 1", &[])
        .map_err(|e| db_error("reading skillrag_schema", e))?;
    Ok(Some(row.map_or(0, |r| r.get(0))))
}

fn create_schema(conn: &mut Conn) -> Result<(), StoreError> {
    ensure_search_schema(conn)?;
    if let Err(e) = conn.batch_execute("CREATE EXTENSION IF NOT EXISTS vector") {
        let exists: bool = conn
            .query_one("SELECT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'vector')", &[])
            .map(|r| r.get(0))
            .unwrap_or(false);
        if !exists {
            return Err(StoreError::Database(format!(
                "the pgvector extension is not installed in this database and could not be created ({}); \
                 install pgvector and run `CREATE EXTENSION vector` as a superuser",
                db_error("", e)
            )));
        }
    }
    let mut tx = conn.transaction().map_err(|e| db_error("creating the skillrag tables", e))?;
    tx.execute(&format!("SELECT pg_advisory_xact_lock({LOCK_KEY})"), &[&""])
        .map_err(|e| db_error("locking the schema", e))?;
    // Another process may have created the tables while this one waited for the lock.
    let exists: Option<String> = tx
        .query_one("SELECT to_regclass('skillrag_schema')::text", &[])
        .map_err(|e| db_error("checking the skillrag schema", e))?
        .get(0);
    if exists.is_none() {
        tx.batch_execute(&format!(
            "CREATE TABLE skillrag_schema (version integer NOT NULL);
             INSERT INTO skillrag_schema VALUES ({SCHEMA_VERSION});
             CREATE TABLE skillrag_skills (
                 skill text PRIMARY KEY,
                 part bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                 generation bigint,
                 meta jsonb,
                 manifest jsonb,
                 chunk_count bigint NOT NULL DEFAULT 0,
                 token_count bigint NOT NULL DEFAULT 0,
                 mean_visibility real,
                 updated_at timestamptz
             );
             CREATE TABLE skillrag_chunks (
                 skill text NOT NULL,
                 id bigint NOT NULL,
                 born bigint NOT NULL,
                 died bigint,
                 source text NOT NULL,
                 chunk jsonb NOT NULL,
                 terms text[] NOT NULL,
                 tfs integer[] NOT NULL,
                 len integer NOT NULL,
                 tokens integer NOT NULL,
                 embedding vector,
                 visibility real,
                 PRIMARY KEY (skill, id, born)
             ) PARTITION BY LIST (skill);
             CREATE INDEX skillrag_chunks_terms ON skillrag_chunks USING gin (terms);
             CREATE INDEX skillrag_chunks_source ON skillrag_chunks (skill, source);"
        ))
        .map_err(|e| db_error("creating the skillrag tables", e))?;
    }
    tx.commit().map_err(|e| db_error("creating the skillrag tables", e))
}

/// `name` as a quoted SQL identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `value` as a quoted SQL string literal (standard_conforming_strings, the default since 9.1).
pub(crate) fn quote_literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// The partition table of a skill.
pub(crate) fn partition(part: i64) -> String {
    format!("skillrag_chunks_p{part}")
}

/// The HNSW index of a partition for vectors of `dim` dimensions. Vectors of another dimension
/// (from the generation before a model change) stay in the table, outside this partial index.
pub(crate) fn hnsw_index(part: i64, dim: usize) -> String {
    format!("skillrag_chunks_p{part}_hnsw{dim}")
}

/// The condition for rows visible in `generation`. A chunk id is unique within one generation;
/// the same id may live in two rows of different generations (a re-import of a skill's ids).
pub(crate) fn visible_in(generation: i64) -> String {
    format!("born <= {generation} AND (died IS NULL OR died > {generation})")
}

impl Store for PostgresStore {
    fn open(&self, skill: &str) -> Result<Option<Arc<dyn SkillIndex>>, StoreError> {
        let index = PgSkillIndex::open(self, skill)?;
        Ok(index.map(|i| Arc::new(i) as Arc<dyn SkillIndex>))
    }

    fn begin(&self, skill: &str, meta: IndexMeta) -> Result<Box<dyn IndexWriter>, StoreError> {
        self.refuse_writes(&format!("index skill `{skill}`"))?;
        Ok(Box::new(writer::PgWriter::begin(self, skill, meta)?))
    }

    fn generation(&self, skill: &str) -> Result<Option<u64>, StoreError> {
        let row = self
            .conn()?
            .query_opt("SELECT generation FROM skillrag_skills WHERE skill = $1", &[&skill])
            .map_err(|e| db_error("reading the published generation", e))?;
        Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)).map(|g| g as u64))
    }

    fn skills(&self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .conn()?
            .query("SELECT skill FROM skillrag_skills WHERE generation IS NOT NULL ORDER BY skill", &[])
            .map_err(|e| db_error("listing indexed skills", e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn remove(&self, skill: &str) -> Result<(), StoreError> {
        self.refuse_writes(&format!("remove the index of skill `{skill}`"))?;
        let mut conn = self.conn()?;
        let mut tx = conn.transaction().map_err(|e| db_error("removing a skill", e))?;
        let Some(part) = Self::part_of(&mut tx, skill)? else { return Ok(()) };
        let locked: bool = tx
            .query_one(&format!("SELECT pg_try_advisory_xact_lock({LOCK_KEY})"), &[&format!("skill:{skill}")])
            .map_err(|e| db_error("locking a skill", e))?
            .get(0);
        if !locked {
            return Err(StoreError::Locked(skill.to_string()));
        }
        tx.batch_execute(&format!("DROP TABLE IF EXISTS {}", partition(part)))
            .map_err(|e| db_error("dropping a skill's partition", e))?;
        tx.execute("DELETE FROM skillrag_skills WHERE skill = $1", &[&skill])
            .map_err(|e| db_error("removing a skill", e))?;
        tx.commit().map_err(|e| db_error("removing a skill", e))
    }

    fn writable(&self) -> Result<(), StoreError> {
        self.refuse_writes("write")
    }

    fn size_on_disk(&self, skill: &str) -> Option<u64> {
        let mut conn = self.conn().ok()?;
        let part = Self::part_of(&mut *conn, skill).ok()??;
        let row =
            conn.query_one("SELECT coalesce(pg_total_relation_size(to_regclass($1)), 0)", &[&partition(part)]).ok()?;
        Some(row.get::<_, i64>(0) as u64)
    }
}

#[cfg(test)]
mod tests;
