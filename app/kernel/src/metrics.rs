//! Every metric Ebb exports, in one list: its name, type, labels and meaning. The server describes
//! each one to the recorder at start (`# HELP` and `# TYPE` in `/metrics`); the list is pinned by a
//! snapshot test, and a scrape naming a metric that is not here fails the metrics test. Labels are
//! closed sets (a route template, a job name, an outcome): never an address, a token or a path.

/// What kind of series a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
}

impl MetricType {
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
        }
    }
}

/// One exported metric.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    pub name: &'static str,
    pub kind: MetricType,
    pub labels: &'static [&'static str],
    pub help: &'static str,
}

const fn m(name: &'static str, kind: MetricType, labels: &'static [&'static str], help: &'static str) -> Metric {
    Metric { name, kind, labels, help }
}

use MetricType::{Counter, Gauge, Histogram};

/// The catalogue, by name.
pub const CATALOGUE: &[Metric] = &[
    m("ebb_alerts_raised_total", Counter, &["kind"], "Alerts raised (a promise at risk or a person needed), by kind."),
    m("ebb_background_task_failures_total", Counter, &["task"], "Background tasks that ended with an error, by task."),
    m("ebb_contact_batch_size", Histogram, &[], "Contact-form submissions written per database statement."),
    m("ebb_contact_spam_signals_total", Counter, &["signal"], "Spam signals seen on contact-form submissions, by signal."),
    m("ebb_contact_statement_seconds", Histogram, &[], "Time of one statement writing a batch of contact-form submissions."),
    m("ebb_contact_submissions_total", Counter, &["outcome"], "Contact-form submissions, by outcome (accepted, quarantined, limited…)."),
    m("ebb_export_rows_total", Counter, &[], "Rows written by inbox exports."),
    m("ebb_http_connections_open", Gauge, &[], "HTTP connections open now."),
    m("ebb_http_connections_refused_total", Counter, &["cap"], "Connections refused at a cap (in all, or per client), by cap."),
    m("ebb_http_request_duration_seconds", Histogram, &["method", "route"], "Request latency, by method and route template."),
    m("ebb_http_requests_total", Counter, &["method", "route", "status"], "Requests answered, by method, route template and status."),
    m("ebb_http_slow_bodies_cut_total", Counter, &[], "Request bodies cut off for arriving slower than the minimum pace."),
    m("ebb_job_duration_seconds", Histogram, &["job"], "Duration of a job's run, by job."),
    m("ebb_job_runs_total", Counter, &["job", "trigger", "outcome"], "Job runs, by job, trigger and outcome."),
    m("ebb_job_step_failures_total", Counter, &["job", "step"], "Job steps that failed, by job and step."),
    m("ebb_job_step_rows_total", Counter, &["job", "step", "count"], "What job steps did (rows deleted, files purged…), by job, step and count."),
    m("ebb_notify_failures_total", Counter, &[], "Notification emails that could not be sent (retried)."),
    m("ebb_notify_given_up_total", Counter, &[], "File notifications given up a day after their event (an alert is raised)."),
    m("ebb_notify_sent_total", Counter, &[], "Notification emails sent."),
    m("ebb_page_cache_total", Counter, &["result"], "Public pages answered from the page cache (hit) or rendered (miss)."),
    m("ebb_rate_limit_refusals_total", Counter, &["limit"], "Requests refused by a rate limit, by limit."),
    m("ebb_share_gc_delete_failures_total", Counter, &[], "Share files whose deletion failed (retried with backoff)."),
];

/// The catalogue as text, one metric a line (`name type [labels] help`): what the snapshot pins.
pub fn catalogue_text() -> String {
    CATALOGUE.iter().map(|m| format!("{} {} [{}] {}\n", m.name, m.kind.as_str(), m.labels.join(","), m.help)).collect()
}

/// Describes every metric to the installed recorder (call once the recorder is installed).
pub fn describe() {
    for m in CATALOGUE {
        match m.kind {
            Counter => metrics::describe_counter!(m.name, m.help),
            Gauge => metrics::describe_gauge!(m.name, m.help),
            Histogram => metrics::describe_histogram!(m.name, m.help),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_sorted_unique_and_prometheus_named() {
        let names: Vec<&str> = CATALOGUE.iter().map(|m| m.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted, "sorted by name, each once");
        for m in CATALOGUE {
            assert!(m.name.starts_with("ebb_") && m.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{}", m.name);
            assert_eq!(m.kind == Counter, m.name.ends_with("_total"), "{}: counters and only counters end in _total", m.name);
            assert!(!m.help.is_empty());
        }
    }
}
