//! Staff accounts, their shops, their tokens and their sign-in attempts.

use ordergate_domain::staff::{Account, Device, LoginPolicy, Member, Membership, Role};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::Owned;
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{millis, name, time, uuid};
use crate::error::SqliteError;
use crate::shops;

fn account_from_row(row: &Row) -> rusqlite::Result<Account> {
    Ok(Account {
        account_id: uuid(row, 0)?,
        username: row.get(1)?,
        password_hash: row.get(2)?,
        created_at: time(row, 3)?,
    })
}

pub(crate) fn account_by_username(
    conn: &Connection,
    username: &str,
) -> Result<Option<Account>, SqliteError> {
    Ok(conn
        .prepare_cached(
            "select account_id, username, password_hash, created_at
             from accounts where username = ?1",
        )?
        .query_row([username], account_from_row)
        .optional()?)
}

pub(crate) fn add_member(
    conn: &Connection,
    shop_id: Uuid,
    username: &str,
    new_account: Option<&Account>,
    role: Role,
    now: Timestamp,
) -> Result<(Member, bool), SqliteError> {
    shops::require(conn, shop_id)?;
    let existing = account_by_username(conn, username)?;
    let account = match (new_account, existing) {
        (Some(_), Some(_)) => {
            return Err(Rejection::UsernameTaken {
                username: username.to_owned(),
            }
            .into());
        }
        (Some(account), None) => {
            conn.prepare_cached(
                "insert into accounts (account_id, username, password_hash, created_at)
                 values (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                account.account_id.to_string(),
                account.username,
                account.password_hash,
                millis(account.created_at)
            ])?;
            account.clone()
        }
        (None, Some(account)) => account,
        (None, None) => return Err(Rejection::NotFound("account").into()),
    };
    let added =
        conn.prepare_cached(
            "insert into memberships (shop_id, account_id, role, created_at)
             values (?1, ?2, ?3, ?4)
             on conflict (shop_id, account_id) do nothing",
        )?
        .execute(params![
            shop_id.to_string(),
            account.account_id.to_string(),
            role.as_str(),
            millis(now)
        ])? == 1;
    if !added {
        conn.prepare_cached(
            "update memberships set role = ?3 where shop_id = ?1 and account_id = ?2",
        )?
        .execute(params![
            shop_id.to_string(),
            account.account_id.to_string(),
            role.as_str()
        ])?;
    }
    let member = Member {
        account_id: account.account_id,
        username: account.username,
        role,
    };
    Ok((member, added))
}

pub(crate) fn members(conn: &Connection, shop_id: Uuid) -> Result<Vec<Member>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(
        "select a.account_id, a.username, m.role
         from memberships m join accounts a on a.account_id = m.account_id
         where m.shop_id = ?1 order by a.username",
    )?;
    let members = stmt
        .query_map([shop_id.to_string()], |row| {
            Ok(Member {
                account_id: uuid(row, 0)?,
                username: row.get(1)?,
                role: name(row, 2, Role::parse)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(members)
}

pub(crate) fn remove_member(
    conn: &Connection,
    shop_id: Uuid,
    account_id: Uuid,
) -> Result<(), SqliteError> {
    let removed = conn
        .prepare_cached("delete from memberships where shop_id = ?1 and account_id = ?2")?
        .execute(params![shop_id.to_string(), account_id.to_string()])?;
    if removed == 0 {
        return Err(Rejection::NotFound("member").into());
    }
    // An account of no shop any more is signed out everywhere.
    conn.prepare_cached(
        "delete from staff_tokens where account_id = ?1
         and not exists (select 1 from memberships where account_id = ?1)",
    )?
    .execute([account_id.to_string()])?;
    Ok(())
}

pub(crate) fn count_login_attempt(
    conn: &Connection,
    subjects: &[String],
    policy: LoginPolicy,
    now: Timestamp,
) -> Result<Option<Timestamp>, SqliteError> {
    let lapsed_before = millis(now - policy.window);
    let mut locked_until: Option<Timestamp> = None;
    for subject in subjects {
        let (failures, started): (i64, i64) = conn
            .prepare_cached(
                "insert into login_attempts (subject, failures, window_started_at)
                 values (?1, 1, ?2)
                 on conflict (subject) do update set
                     failures = case when window_started_at <= ?3 then 1 else failures + 1 end,
                     window_started_at = case when window_started_at <= ?3 then ?2
                                              else window_started_at end
                 returning failures, window_started_at",
            )?
            .query_row(params![subject, millis(now), lapsed_before], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
        if failures > policy.most_failures(subject) {
            let until = Timestamp::from_timestamp_millis(started).unwrap_or(now) + policy.window;
            locked_until = locked_until.max(Some(until));
        }
    }
    Ok(locked_until)
}

pub(crate) fn forgive_login_attempt(
    conn: &Connection,
    account: &str,
    address: &str,
) -> Result<(), SqliteError> {
    conn.prepare_cached("delete from login_attempts where subject = ?1")?
        .execute([account])?;
    conn.prepare_cached(
        "update login_attempts set failures = max(failures - 1, 0) where subject = ?1",
    )?
    .execute([address])?;
    Ok(())
}

pub(crate) fn create_token(
    conn: &Connection,
    token_digest: &str,
    account_id: Uuid,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "insert into staff_tokens (token_digest, account_id, created_at, expires_at)
         values (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        token_digest,
        account_id.to_string(),
        millis(now),
        millis(expires_at)
    ])?;
    Ok(())
}

pub(crate) fn token_account(
    conn: &Connection,
    token_digest: &str,
    now: Timestamp,
) -> Result<Option<(Account, Vec<Membership>)>, SqliteError> {
    let account = conn
        .prepare_cached(
            "select a.account_id, a.username, a.password_hash, a.created_at
             from staff_tokens t join accounts a on a.account_id = t.account_id
             where t.token_digest = ?1 and t.expires_at > ?2",
        )?
        .query_row(params![token_digest, millis(now)], account_from_row)
        .optional()?;
    let Some(account) = account else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "select shop_id, role from memberships where account_id = ?1 order by shop_id",
    )?;
    let memberships = stmt
        .query_map([account.account_id.to_string()], |row| {
            Ok(Membership {
                shop_id: uuid(row, 0)?,
                role: name(row, 1, Role::parse)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(Some((account, memberships)))
}

pub(crate) fn revoke_token(conn: &Connection, token_digest: &str) -> Result<(), SqliteError> {
    conn.prepare_cached("delete from staff_tokens where token_digest = ?1")?
        .execute([token_digest])?;
    Ok(())
}

pub(crate) fn change_password(
    conn: &Connection,
    account_id: Uuid,
    password_hash: &str,
    kept: &str,
) -> Result<(), SqliteError> {
    let changed = conn
        .prepare_cached("update accounts set password_hash = ?2 where account_id = ?1")?
        .execute(params![account_id.to_string(), password_hash])?;
    if changed == 0 {
        return Err(Rejection::NotFound("account").into());
    }
    conn.prepare_cached("delete from staff_tokens where account_id = ?1 and token_digest <> ?2")?
        .execute(params![account_id.to_string(), kept])?;
    Ok(())
}

fn device_from_row(row: &Row) -> rusqlite::Result<Device> {
    Ok(Device {
        device_id: uuid(row, 0)?,
        shop_id: uuid(row, 1)?,
        name: row.get(2)?,
        role: name(row, 3, Role::parse)?,
        created_at: time(row, 4)?,
    })
}

pub(crate) fn create_device(
    conn: &Connection,
    device: &Device,
    token_digest: &str,
) -> Result<(), SqliteError> {
    shops::require(conn, device.shop_id)?;
    conn.prepare_cached(
        "insert into devices (device_id, shop_id, name, role, token_digest, created_at)
         values (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        device.device_id.to_string(),
        device.shop_id.to_string(),
        device.name,
        device.role.as_str(),
        token_digest,
        millis(device.created_at)
    ])?;
    Ok(())
}

pub(crate) fn devices(conn: &Connection, shop_id: Uuid) -> Result<Vec<Device>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(
        "select device_id, shop_id, name, role, created_at
         from devices where shop_id = ?1 order by created_at, device_id",
    )?;
    let devices = stmt
        .query_map([shop_id.to_string()], device_from_row)?
        .collect::<Result<_, _>>()?;
    Ok(devices)
}

pub(crate) fn revoke_device(
    conn: &Connection,
    shop_id: Uuid,
    device_id: Uuid,
) -> Result<(), SqliteError> {
    let removed = conn
        .prepare_cached("delete from devices where shop_id = ?1 and device_id = ?2")?
        .execute(params![shop_id.to_string(), device_id.to_string()])?;
    if removed == 0 {
        return Err(Rejection::NotFound("device").into());
    }
    Ok(())
}

pub(crate) fn device_token(
    conn: &Connection,
    token_digest: &str,
) -> Result<Option<Device>, SqliteError> {
    Ok(conn
        .prepare_cached(
            "select device_id, shop_id, name, role, created_at
             from devices where token_digest = ?1",
        )?
        .query_row([token_digest], device_from_row)
        .optional()?)
}

pub(crate) fn shop_of(conn: &Connection, resource: Owned) -> Result<Option<Uuid>, SqliteError> {
    let (table, column, id) = resource.row();
    // Names from a closed list, never from a request.
    let sql = format!("select shop_id from {table} where {column} = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id.to_string()], |row| uuid(row, 0))
        .optional()?)
}

/// Forgets tokens that expired and attempt counts no window still holds;
/// returns how many rows went.
pub(crate) fn purge(conn: &Connection, now: Timestamp) -> Result<u64, SqliteError> {
    let tokens = conn
        .prepare_cached("delete from staff_tokens where expires_at <= ?1")?
        .execute([millis(now)])?;
    let attempts = conn
        .prepare_cached("delete from login_attempts where window_started_at <= ?1")?
        .execute([millis(now - ordergate_domain::staff::ATTEMPTS_KEPT)])?;
    Ok((tokens + attempts) as u64)
}
