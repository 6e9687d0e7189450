//! Staff accounts, their shops, their tokens and their sign-in attempts.

use ordergate_domain::staff::{
    ATTEMPTS_KEPT, Account, Device, LoginPolicy, Member, Membership, Role,
};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::Owned;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::error::PgError;
use crate::shops;
use crate::tx::Tx;

fn account_from_row(row: PgRow) -> sqlx::Result<Account> {
    Ok(Account {
        account_id: row.try_get(0)?,
        username: row.try_get(1)?,
        password_hash: row.try_get(2)?,
        created_at: row.try_get(3)?,
    })
}

fn role(row: &PgRow, idx: usize) -> sqlx::Result<Role> {
    let name: String = row.try_get(idx)?;
    Role::parse(&name).ok_or_else(|| sqlx::Error::Decode(format!("unknown role {name:?}").into()))
}

pub(crate) async fn account_by_username(
    conn: &mut PgConnection,
    username: &str,
) -> Result<Option<Account>, PgError> {
    Ok(sqlx::query(
        "select account_id, username, password_hash, created_at
         from accounts where username = $1",
    )
    .bind(username)
    .try_map(account_from_row)
    .fetch_optional(conn)
    .await?)
}

pub(crate) async fn add_member(
    tx: &mut Tx,
    shop_id: Uuid,
    username: &str,
    new_account: Option<&Account>,
    role: Role,
    now: Timestamp,
) -> Result<(Member, bool), PgError> {
    shops::require(tx.conn(), shop_id).await?;
    let account = match new_account {
        Some(account) => {
            // Two owners naming one account at once: the unique key decides.
            let inserted = sqlx::query(
                "insert into accounts (account_id, username, password_hash, created_at)
                 values ($1, $2, $3, $4) on conflict (username) do nothing",
            )
            .bind(account.account_id)
            .bind(&account.username)
            .bind(&account.password_hash)
            .bind(account.created_at)
            .execute(tx.conn())
            .await?;
            if inserted.rows_affected() == 0 {
                return Err(Rejection::UsernameTaken {
                    username: username.to_owned(),
                }
                .into());
            }
            account.clone()
        }
        None => account_by_username(tx.conn(), username)
            .await?
            .ok_or(Rejection::NotFound("account"))?,
    };
    let added: bool = sqlx::query_scalar(
        "insert into memberships (shop_id, account_id, role, created_at)
         values ($1, $2, $3, $4)
         on conflict (shop_id, account_id) do update set role = excluded.role
         returning xmax = 0",
    )
    .bind(shop_id)
    .bind(account.account_id)
    .bind(role.as_str())
    .bind(now)
    .fetch_one(tx.conn())
    .await?;
    let member = Member {
        account_id: account.account_id,
        username: account.username,
        role,
    };
    Ok((member, added))
}

pub(crate) async fn members(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<Vec<Member>, PgError> {
    shops::require(&mut *conn, shop_id).await?;
    Ok(sqlx::query(
        "select a.account_id, a.username, m.role
         from memberships m join accounts a on a.account_id = m.account_id
         where m.shop_id = $1 order by a.username",
    )
    .bind(shop_id)
    .try_map(|row: PgRow| {
        Ok(Member {
            account_id: row.try_get(0)?,
            username: row.try_get(1)?,
            role: role(&row, 2)?,
        })
    })
    .fetch_all(conn)
    .await?)
}

pub(crate) async fn remove_member(
    tx: &mut Tx,
    shop_id: Uuid,
    account_id: Uuid,
) -> Result<(), PgError> {
    let removed = sqlx::query("delete from memberships where shop_id = $1 and account_id = $2")
        .bind(shop_id)
        .bind(account_id)
        .execute(tx.conn())
        .await?;
    if removed.rows_affected() == 0 {
        return Err(Rejection::NotFound("member").into());
    }
    // An account of no shop any more is signed out everywhere.
    sqlx::query(
        "delete from staff_tokens where account_id = $1
         and not exists (select 1 from memberships where account_id = $1)",
    )
    .bind(account_id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub(crate) async fn count_login_attempt(
    conn: &mut PgConnection,
    subjects: &[String],
    policy: LoginPolicy,
    now: Timestamp,
) -> Result<Option<Timestamp>, PgError> {
    let lapsed_before = now - policy.window;
    let mut locked_until: Option<Timestamp> = None;
    for subject in subjects {
        // One statement: concurrent attempts each get their own count.
        let (failures, started): (i64, Timestamp) = sqlx::query_as(
            "insert into login_attempts (subject, failures, window_started_at)
             values ($1, 1, $2)
             on conflict (subject) do update set
                 failures = case when login_attempts.window_started_at <= $3 then 1
                                 else login_attempts.failures + 1 end,
                 window_started_at = case when login_attempts.window_started_at <= $3 then $2
                                          else login_attempts.window_started_at end
             returning failures, window_started_at",
        )
        .bind(subject)
        .bind(now)
        .bind(lapsed_before)
        .fetch_one(&mut *conn)
        .await?;
        if failures > policy.most_failures(subject) {
            locked_until = locked_until.max(Some(started + policy.window));
        }
    }
    Ok(locked_until)
}

pub(crate) async fn forgive_login_attempt(
    conn: &mut PgConnection,
    account: &str,
    address: &str,
) -> Result<(), PgError> {
    sqlx::query("delete from login_attempts where subject = $1")
        .bind(account)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "update login_attempts set failures = greatest(failures - 1, 0) where subject = $1",
    )
    .bind(address)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn create_token(
    conn: &mut PgConnection,
    token_digest: &str,
    account_id: Uuid,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<(), PgError> {
    sqlx::query(
        "insert into staff_tokens (token_digest, account_id, created_at, expires_at)
         values ($1, $2, $3, $4)",
    )
    .bind(token_digest)
    .bind(account_id)
    .bind(now)
    .bind(expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn token_account(
    conn: &mut PgConnection,
    token_digest: &str,
    now: Timestamp,
) -> Result<Option<(Account, Vec<Membership>)>, PgError> {
    let account = sqlx::query(
        "select a.account_id, a.username, a.password_hash, a.created_at
         from staff_tokens t join accounts a on a.account_id = t.account_id
         where t.token_digest = $1 and t.expires_at > $2",
    )
    .bind(token_digest)
    .bind(now)
    .try_map(account_from_row)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(account) = account else {
        return Ok(None);
    };
    let memberships =
        sqlx::query("select shop_id, role from memberships where account_id = $1 order by shop_id")
            .bind(account.account_id)
            .try_map(|row: PgRow| {
                Ok(Membership {
                    shop_id: row.try_get(0)?,
                    role: role(&row, 1)?,
                })
            })
            .fetch_all(conn)
            .await?;
    Ok(Some((account, memberships)))
}

pub(crate) async fn revoke_token(
    conn: &mut PgConnection,
    token_digest: &str,
) -> Result<(), PgError> {
    sqlx::query("delete from staff_tokens where token_digest = $1")
        .bind(token_digest)
        .execute(conn)
        .await?;
    Ok(())
}

pub(crate) async fn change_password(
    tx: &mut Tx,
    account_id: Uuid,
    password_hash: &str,
    kept: &str,
) -> Result<(), PgError> {
    let changed = sqlx::query("update accounts set password_hash = $2 where account_id = $1")
        .bind(account_id)
        .bind(password_hash)
        .execute(tx.conn())
        .await?;
    if changed.rows_affected() == 0 {
        return Err(Rejection::NotFound("account").into());
    }
    sqlx::query("delete from staff_tokens where account_id = $1 and token_digest <> $2")
        .bind(account_id)
        .bind(kept)
        .execute(tx.conn())
        .await?;
    Ok(())
}

fn device_from_row(row: PgRow) -> sqlx::Result<Device> {
    Ok(Device {
        device_id: row.try_get(0)?,
        shop_id: row.try_get(1)?,
        name: row.try_get(2)?,
        role: role(&row, 3)?,
        created_at: row.try_get(4)?,
    })
}

pub(crate) async fn create_device(
    conn: &mut PgConnection,
    device: &Device,
    token_digest: &str,
) -> Result<(), PgError> {
    shops::require(&mut *conn, device.shop_id).await?;
    sqlx::query(
        "insert into devices (device_id, shop_id, name, role, token_digest, created_at)
         values ($1, $2, $3, $4, $5, $6)",
    )
    .bind(device.device_id)
    .bind(device.shop_id)
    .bind(&device.name)
    .bind(device.role.as_str())
    .bind(token_digest)
    .bind(device.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn devices(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<Vec<Device>, PgError> {
    shops::require(&mut *conn, shop_id).await?;
    Ok(sqlx::query(
        "select device_id, shop_id, name, role, created_at
         from devices where shop_id = $1 order by created_at, device_id",
    )
    .bind(shop_id)
    .try_map(device_from_row)
    .fetch_all(conn)
    .await?)
}

pub(crate) async fn revoke_device(
    conn: &mut PgConnection,
    shop_id: Uuid,
    device_id: Uuid,
) -> Result<(), PgError> {
    let removed = sqlx::query("delete from devices where shop_id = $1 and device_id = $2")
        .bind(shop_id)
        .bind(device_id)
        .execute(conn)
        .await?;
    if removed.rows_affected() == 0 {
        return Err(Rejection::NotFound("device").into());
    }
    Ok(())
}

pub(crate) async fn device_token(
    conn: &mut PgConnection,
    token_digest: &str,
) -> Result<Option<Device>, PgError> {
    Ok(sqlx::query(
        "select device_id, shop_id, name, role, created_at
         from devices where token_digest = $1",
    )
    .bind(token_digest)
    .try_map(device_from_row)
    .fetch_optional(conn)
    .await?)
}

pub(crate) async fn shop_of(
    conn: &mut PgConnection,
    resource: Owned,
) -> Result<Option<Uuid>, PgError> {
    let (table, column, id) = resource.row();
    // Names from a closed list, never from a request.
    let sql = format!("select shop_id from {table} where {column} = $1");
    Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn)
        .await?)
}

/// Forgets tokens that expired and attempt counts no window still holds.
pub(crate) async fn purge(conn: &mut PgConnection, now: Timestamp) -> Result<u64, PgError> {
    let tokens = sqlx::query("delete from staff_tokens where expires_at <= $1")
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    let attempts = sqlx::query("delete from login_attempts where window_started_at <= $1")
        .bind(now - ATTEMPTS_KEPT)
        .execute(conn)
        .await?
        .rows_affected();
    Ok(tokens + attempts)
}
