-- Which applied migrations only expand the schema, so that an older binary can run beside them (a
-- restart mid-rollout, or a step back). Each binary records its own migrations here after applying
-- them (expand-only unless the file's first line is `-- contract:`); an older binary that finds
-- migrations it does not know starts only when every one of them is recorded here as expand-only.
create table schema_compat (
    version     bigint primary key,
    expand_only boolean not null
);
