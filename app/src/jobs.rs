//! The lifecycle engine (`kernel::jobs`) and the one registry of every job: the server's ticker,
//! the CLI, the dashboard and the tests all use [`registry`]. Adding a job: one entry here.

pub use kernel::jobs::*;

/// Every lifecycle job, in the order the ticker and the CLI run them.
pub fn registry() -> Registry {
    Registry::new(vec![
        // Prune: each domain's deletes of its own tables, in the kernel's paced loop. A closed
        // data request's address goes with prune's other personal data; the last step checks
        // every kind of data against its promise (issue 16).
        kernel::prune::job([contact::prune::steps(), auth::prune::steps(), shares::prune::steps()].concat())
            .step(requests::erase::forget_step())
            .step(crate::retention::report::step()),
        shares::gc::job(),
        audit::upkeep::job(),
        audit::chain::job::job(),
        audit::archive::job(),
        audit::exports::job(),
        contact::notify::job(),
        requests::erase::job(),
    ])
}

#[cfg(test)]
mod tests {
    /// Every job, step label and description of the registry has its Japanese, with the
    /// registry's very English.
    #[test]
    fn every_job_of_the_registry_is_translated() {
        for job in super::registry().jobs() {
            let steps: Vec<(&str, &str)> = job.steps.iter().map(|s| (s.name, s.label)).collect();
            maintenance::ui::check_job_translated(job.name, job.title, job.description, &steps).unwrap();
        }
        assert!(maintenance::ui::check_job_translated("some_new_job", "Some new job", "", &[]).is_err());
    }
}
