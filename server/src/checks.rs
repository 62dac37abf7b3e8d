//! The report `ebb doctor` prints: one line per check (`ok`, `WARN`, `FAIL`, `skip`).

use serde::Serialize;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Works, but should be looked at (said why).
    Warn,
    /// Needs fixing: the command exits 1.
    Fail,
    /// Not checked, because something it depends on failed.
    Skipped,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
            Status::Skipped => "skip",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
}

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    pub(crate) fn push(&mut self, name: &'static str, status: Status, detail: impl Into<String>) {
        self.checks.push(Check { name, status, detail: detail.into() });
    }
    pub(crate) fn result(&mut self, name: &'static str, r: Result<(Status, String), String>) {
        match r {
            Ok((s, d)) => self.push(name, s, d),
            Err(e) => self.push(name, Status::Fail, e),
        }
    }
    pub fn failed(&self) -> usize {
        self.checks.iter().filter(|c| c.status == Status::Fail).count()
    }
    pub fn warned(&self) -> usize {
        self.checks.iter().filter(|c| c.status == Status::Warn).count()
    }
    pub fn get(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }
}

/// Writes the report; `Err` (exit 1) when a check failed.
pub fn print(report: &Report, json: bool, out: &mut impl std::io::Write) -> Result<(), String> {
    if json {
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(report).unwrap_or_default());
    } else {
        for c in &report.checks {
            let _ = writeln!(out, "{:<5} {:<18} {}", c.status.label(), c.name, c.detail);
        }
        let _ = writeln!(out, "{} checks: {} failed, {} warnings", report.checks.len(), report.failed(), report.warned());
    }
    match report.failed() {
        0 => Ok(()),
        n => Err(format!("{n} check(s) failed (the FAIL lines above say what to do)")),
    }
}
