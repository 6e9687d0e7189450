-- Guest access and abuse limits (API v1.1): guest tokens, and what the
-- purges of expired tokens and old audit rows look rows up by.

-- A guest token, known only by its digest: the token itself is shown to the
-- guest once and never stored. Deleted at checkout and once expired.
create table guest_tokens (
    token_digest text primary key,
    shop_id uuid not null references shops (shop_id),
    session_id uuid not null references table_sessions (session_id),
    created_at timestamptz not null,
    expires_at timestamptz not null
);

create index guest_tokens_by_session on guest_tokens (session_id);
create index guest_tokens_by_expiry on guest_tokens (expires_at);

create index audit_log_by_time on audit_log (created_at);
