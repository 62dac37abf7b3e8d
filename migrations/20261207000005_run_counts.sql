-- Issue 55: a run's counts saved with each committed batch. A batch statement that deletes rows
-- adds what it deleted here in the same statement, so a run killed at any point has a record that
-- equals what it deleted (the heartbeat's copy in `maintenance_runs.steps` may lag by seconds).
create table maintenance_run_counts (
    run_id  bigint not null references maintenance_runs (id) on delete cascade,
    step    text not null,
    name    text not null,
    n       bigint not null check (n >= 0),
    primary key (run_id, step, name)
);
