//! Prometheus metrics (`GET /metrics`): requests, latency per route and per answer stage,
//! refusals by kind, the answer cache and queue, and index reloads.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use skillrag_ask::Answer;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    result: &'static str,
}

/// 0.1 ms … 3.3 s in 16 doublings: extractive answers take milliseconds, re-indexing seconds.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_seconds: Family<RouteLabels, Histogram>,
    stage_seconds: Family<StageLabels, Histogram>,
    refusals: Family<KindLabels, Counter>,
    answer_cache: Family<CacheLabels, Counter>,
    pub queue_waiting: Gauge,
    pub queue_full: Counter,
    pub reloads: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("skillrag");
        let requests = Family::<RequestLabels, Counter>::default();
        let request_seconds = Family::<RouteLabels, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        let stage_seconds = Family::<StageLabels, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        let refusals = Family::<KindLabels, Counter>::default();
        let answer_cache = Family::<CacheLabels, Counter>::default();
        let queue_waiting = Gauge::default();
        let queue_full = Counter::default();
        let reloads = Counter::default();
        registry.register("http_requests", "HTTP requests by route, method and status", requests.clone());
        registry.register("http_request_duration_seconds", "HTTP request latency by route", request_seconds.clone());
        registry.register(
            "answer_stage_duration_seconds",
            "Time spent in each stage of answering (gate, route, retrieve, generate, total)",
            stage_seconds.clone(),
        );
        registry.register("refusals", "Refused questions by kind", refusals.clone());
        registry.register("answer_cache", "Answer cache lookups by result", answer_cache.clone());
        registry.register("work_queue_waiting", "Requests waiting for a worker slot", queue_waiting.clone());
        registry.register(
            "work_queue_rejected",
            "Requests refused with 503 because the work queue was full",
            queue_full.clone(),
        );
        registry.register("index_reloads", "Switches to newly published index generations", reloads.clone());
        Metrics {
            registry,
            requests,
            request_seconds,
            stage_seconds,
            refusals,
            answer_cache,
            queue_waiting,
            queue_full,
            reloads,
        }
    }

    pub fn request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.requests.get_or_create(&RequestLabels { route: route.into(), method: method.into(), status }).inc();
        self.request_seconds.get_or_create(&RouteLabels { route: route.into() }).observe(seconds);
    }

    /// Records a freshly computed answer: its stage timings and its refusal.
    pub fn answered(&self, answer: &Answer) {
        let t = &answer.timings_ms;
        for (stage, ms) in [
            ("gate", t.gate),
            ("route", t.route),
            ("retrieve", t.retrieve),
            ("generate", t.generate),
            ("total", t.total),
        ] {
            self.stage_seconds.get_or_create(&StageLabels { stage }).observe(ms / 1000.0);
        }
        if let Some(r) = &answer.refusal {
            self.refusals.get_or_create(&KindLabels { kind: r.kind.as_str() }).inc();
        }
    }

    pub fn cache(&self, hit: bool) {
        self.answer_cache.get_or_create(&CacheLabels { result: if hit { "hit" } else { "miss" } }).inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}
