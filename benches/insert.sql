-- pgbench baseline: the single-row INSERT a contact submission ends in.
insert into inquiries (name, email, message) values ('Bench', 'bench@example.org', 'Hello from the benchmark.
Second line.');
