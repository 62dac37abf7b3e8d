-- Issue 53: witness cosignatures (C2SP tlog-cosignature v1) on the transparency log's checkpoints,
-- from the witnesses the operator configured (EBB_AUDIT_WITNESSES). Kept only when they verify;
-- served after Ebb's own signature line. The newest of each witness per checkpoint.
create table audit_tlog_cosignatures (
    size        bigint not null references audit_tlog_checkpoints (size) on delete cascade,
    witness     text not null check (length(witness) between 1 and 200),
    line        text not null check (length(line) < 400),
    signed_at   timestamptz not null,
    received_at timestamptz not null default now(),
    primary key (size, witness)
);
