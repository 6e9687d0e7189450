-- Staff accounts (API v1.1): a person's credentials once, their role per
-- shop, their signed-in tokens (as digests only), and sign-in attempts
-- counted per subject (the username tried, the client address).
create table accounts (
    account_id uuid primary key,
    username text not null unique,
    password_hash text not null,
    created_at timestamptz not null
);

create table memberships (
    shop_id uuid not null references shops (shop_id),
    account_id uuid not null references accounts (account_id),
    role text not null check (role in ('owner', 'manager', 'floor', 'kitchen')),
    created_at timestamptz not null,
    primary key (shop_id, account_id)
);
create index memberships_by_account on memberships (account_id);

create table staff_tokens (
    token_digest text primary key,
    account_id uuid not null references accounts (account_id),
    created_at timestamptz not null,
    expires_at timestamptz not null
);
create index staff_tokens_by_account on staff_tokens (account_id);

create table login_attempts (
    subject text primary key,
    failures bigint not null,
    window_started_at timestamptz not null
);
