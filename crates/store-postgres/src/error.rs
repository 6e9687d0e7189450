//! What a PostgreSQL transaction can fail with, and how each failure is
//! reported to the server.

use ordergate_domain::Rejection;
use ordergate_store::StoreError;

/// What a step inside a transaction can fail with; `?` works on sqlx errors
/// and business rejections alike, and either rolls the transaction back.
#[derive(Debug)]
pub(crate) enum PgError {
    Rejected(Rejection),
    Db(sqlx::Error),
    /// A stored value that cannot be decoded: a bug or damaged data.
    Corrupt(String),
}

impl From<sqlx::Error> for PgError {
    fn from(e: sqlx::Error) -> Self {
        PgError::Db(e)
    }
}

impl From<Rejection> for PgError {
    fn from(r: Rejection) -> Self {
        PgError::Rejected(r)
    }
}

impl From<serde_json::Error> for PgError {
    fn from(e: serde_json::Error) -> Self {
        PgError::Corrupt(e.to_string())
    }
}

impl From<PgError> for StoreError {
    fn from(e: PgError) -> Self {
        match e {
            PgError::Rejected(r) => StoreError::Rejected(r),
            PgError::Corrupt(what) => StoreError::Internal(what.into()),
            PgError::Db(e) => classify(e),
        }
    }
}

/// PostgreSQL's `lock_not_available`: a wait under `lock_timeout` ran out.
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// The store error for a database failure: `Unavailable` when the database
/// cannot be reached or used right now (retrying later may work; a lock
/// wait past the connection's `lock_timeout` counts, where no caller mapped
/// it to a refusal), `Internal` for everything else, unmapped unique
/// violations included.
pub(crate) fn classify(e: sqlx::Error) -> StoreError {
    if is_unavailable(&e) {
        StoreError::Unavailable(readable(e))
    } else {
        StoreError::Internal(readable(e))
    }
}

/// The store error for a failure to get a connection, or to start a
/// transaction on one: whatever the SQLSTATE — 55000 "not currently
/// accepting connections", 53300 too many connections, 57P03 starting up,
/// 3D000 no such database, 28P01 a password refused — the database cannot
/// be used now, which is 503 to the client, not a fault of the request.
pub(crate) fn cannot_connect(e: sqlx::Error) -> StoreError {
    StoreError::Unavailable(readable(e))
}

/// A database error as an operator reads it: PostgreSQL's message and
/// SQLSTATE (sqlx's own text appends the line of PostgreSQL's C source
/// that raised it, which tells an operator nothing). Other errors as they are.
pub fn describe(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(db) => match db.code() {
            Some(code) => format!("{} (SQLSTATE {code})", db.message()),
            None => db.message().to_owned(),
        },
        other => other.to_string(),
    }
}

fn readable(e: sqlx::Error) -> ordergate_store::BoxError {
    match e {
        sqlx::Error::Database(_) => describe(&e).into(),
        other => Box::new(other),
    }
}

fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| unavailable_state(&code) || code == LOCK_NOT_AVAILABLE),
        _ => false,
    }
}

/// SQLSTATEs that say the server cannot serve now, whatever was asked:
/// connection exceptions (class 08), insufficient resources (class 53:
/// too many connections, out of memory or disk), the server shutting down
/// or starting up (57P01 admin shutdown, 57P02 crash shutdown, 57P03
/// cannot connect now), a session ended for idling (57P05), a database
/// that takes no writes now (25006: a standby, or one set read-only for
/// maintenance, until it is promoted or set back), and a transaction the
/// database rolled back to get out of a deadlock or a serialization
/// conflict (40P01, 40001: on Citus, with a shard being moved), which left
/// nothing written: the same request may simply be sent again.
fn unavailable_state(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || matches!(
            code,
            "57P01" | "57P02" | "57P03" | "57P05" | "25006" | "40001" | "40P01"
        )
}

fn sqlstate(e: &PgError) -> Option<String> {
    match e {
        PgError::Db(sqlx::Error::Database(db)) => db.code().map(|c| c.into_owned()),
        _ => None,
    }
}

/// Whether a lock wait ran past its `lock_timeout`.
pub(crate) fn is_lock_timeout(e: &PgError) -> bool {
    sqlstate(e).as_deref() == Some(LOCK_NOT_AVAILABLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_resource_shutdown_and_rolled_back_states_are_unavailable() {
        for code in [
            "08006", "08001", "53300", "53100", "53200", "57P01", "57P02", "57P03", "57P05",
            "25006", "40001", "40P01",
        ] {
            assert!(unavailable_state(code), "{code}");
        }
        for code in [
            "23505", "40003", "55P03", "57014", "42P01", "55000", "22P02",
        ] {
            assert!(!unavailable_state(code), "{code}");
        }
    }

    #[test]
    fn pool_and_io_failures_are_unavailable() {
        assert!(matches!(
            classify(sqlx::Error::PoolTimedOut),
            StoreError::Unavailable(_)
        ));
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(matches!(
            classify(sqlx::Error::Io(io)),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            classify(sqlx::Error::RowNotFound),
            StoreError::Internal(_)
        ));
    }
}
