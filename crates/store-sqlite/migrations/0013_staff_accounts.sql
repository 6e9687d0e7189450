-- Staff accounts (API v1.1): a person's credentials once, their role per
-- shop, their signed-in tokens (as digests only), and sign-in attempts
-- counted per subject (the username tried, the client address).
create table accounts (
    account_id text primary key,
    username text not null unique,
    password_hash text not null,
    created_at integer not null
) strict;

create table memberships (
    shop_id text not null references shops (shop_id),
    account_id text not null references accounts (account_id),
    role text not null check (role in ('owner', 'manager', 'floor', 'kitchen')),
    created_at integer not null,
    primary key (shop_id, account_id)
) strict;
create index memberships_by_account on memberships (account_id);

create table staff_tokens (
    token_digest text primary key,
    account_id text not null references accounts (account_id),
    created_at integer not null,
    expires_at integer not null
) strict;
create index staff_tokens_by_account on staff_tokens (account_id);

create table login_attempts (
    subject text primary key,
    failures integer not null,
    window_started_at integer not null
) strict;
