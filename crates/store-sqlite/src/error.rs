use ordergate_domain::Rejection;
use ordergate_store::StoreError;
use rusqlite::ErrorCode;

/// What a job inside a SQLite transaction can fail with; `?` works on both
/// rusqlite errors and business rejections, and either rolls back.
#[derive(Debug)]
pub(crate) enum SqliteError {
    Rejected(Rejection),
    Db(rusqlite::Error),
    /// A stored value that cannot be decoded: a bug or a damaged file.
    Corrupt(String),
}

impl From<rusqlite::Error> for SqliteError {
    fn from(e: rusqlite::Error) -> Self {
        SqliteError::Db(e)
    }
}

impl From<Rejection> for SqliteError {
    fn from(r: Rejection) -> Self {
        SqliteError::Rejected(r)
    }
}

impl From<serde_json::Error> for SqliteError {
    fn from(e: serde_json::Error) -> Self {
        SqliteError::Corrupt(e.to_string())
    }
}

impl From<SqliteError> for StoreError {
    fn from(e: SqliteError) -> Self {
        match e {
            SqliteError::Rejected(r) => StoreError::Rejected(r),
            SqliteError::Corrupt(what) => StoreError::Internal(what.into()),
            SqliteError::Db(e) if is_unavailable(&e) => StoreError::Unavailable(Box::new(e)),
            SqliteError::Db(e) => StoreError::Internal(Box::new(e)),
        }
    }
}

/// The store error for a failure the job itself did not cause (a commit).
pub(crate) fn classify(e: &rusqlite::Error) -> StoreError {
    let cause: ordergate_store::BoxError = e.to_string().into();
    if is_unavailable(e) {
        StoreError::Unavailable(cause)
    } else {
        StoreError::Internal(cause)
    }
}

/// Errors that say the file cannot be used right now (permissions, a full
/// disk, I/O trouble, another process holding a lock) rather than a bug.
fn is_unavailable(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            ErrorCode::CannotOpen
                | ErrorCode::ReadOnly
                | ErrorCode::DiskFull
                | ErrorCode::SystemIoFailure
                | ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::PermissionDenied
        )
    )
}
