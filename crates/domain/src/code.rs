//! The stable, machine-readable reasons a request is refused, and the HTTP
//! status each one always travels with. Clients branch on these; changing a
//! pair is a breaking change.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    MalformedRequest,
    IdempotencyKeyMissing,
    IdempotencyKeyInvalid,
    ClientIdInvalid,
    Unauthorized,
    PinInvalid,
    NotFound,
    MethodNotAllowed,
    TableOccupied,
    StockNotTracked,
    RequestInProgress,
    DuplicatePayload,
    SessionBusy,
    OutOfStock,
    VersionConflict,
    InvalidTransition,
    SessionClosed,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
    IdempotencyKeyReused,
    UnknownMenuItem,
    InvalidTopping,
    ItemUnavailable,
    PinLocked,
    CooldownActive,
    SessionRateLimited,
    TooManyStreams,
    RequestTimeout,
    HeadersTooLarge,
    Internal,
    Unavailable,
    CatalogNotReady,
    CatalogVersionConflict,
    InvalidOptions,
    InvalidImage,
    TableNameTaken,
    PrinterNameTaken,
    UsernameTaken,
    LoginFailed,
    LoginLocked,
    Forbidden,
    RecallExpired,
    NothingToRecall,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 44] = [
        ErrorCode::MalformedRequest,
        ErrorCode::IdempotencyKeyMissing,
        ErrorCode::IdempotencyKeyInvalid,
        ErrorCode::ClientIdInvalid,
        ErrorCode::Unauthorized,
        ErrorCode::PinInvalid,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::TableOccupied,
        ErrorCode::StockNotTracked,
        ErrorCode::RequestInProgress,
        ErrorCode::DuplicatePayload,
        ErrorCode::SessionBusy,
        ErrorCode::OutOfStock,
        ErrorCode::VersionConflict,
        ErrorCode::InvalidTransition,
        ErrorCode::SessionClosed,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::ValidationFailed,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::UnknownMenuItem,
        ErrorCode::InvalidTopping,
        ErrorCode::ItemUnavailable,
        ErrorCode::PinLocked,
        ErrorCode::CooldownActive,
        ErrorCode::SessionRateLimited,
        ErrorCode::TooManyStreams,
        ErrorCode::RequestTimeout,
        ErrorCode::HeadersTooLarge,
        ErrorCode::Internal,
        ErrorCode::Unavailable,
        ErrorCode::CatalogNotReady,
        ErrorCode::CatalogVersionConflict,
        ErrorCode::InvalidOptions,
        ErrorCode::InvalidImage,
        ErrorCode::TableNameTaken,
        ErrorCode::PrinterNameTaken,
        ErrorCode::UsernameTaken,
        ErrorCode::LoginFailed,
        ErrorCode::LoginLocked,
        ErrorCode::Forbidden,
        ErrorCode::RecallExpired,
        ErrorCode::NothingToRecall,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MalformedRequest => "MALFORMED_REQUEST",
            ErrorCode::IdempotencyKeyMissing => "IDEMPOTENCY_KEY_MISSING",
            ErrorCode::IdempotencyKeyInvalid => "IDEMPOTENCY_KEY_INVALID",
            ErrorCode::ClientIdInvalid => "CLIENT_ID_INVALID",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::PinInvalid => "PIN_INVALID",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ErrorCode::TableOccupied => "TABLE_OCCUPIED",
            ErrorCode::StockNotTracked => "STOCK_NOT_TRACKED",
            ErrorCode::RequestInProgress => "REQUEST_IN_PROGRESS",
            ErrorCode::DuplicatePayload => "DUPLICATE_PAYLOAD",
            ErrorCode::SessionBusy => "SESSION_BUSY",
            ErrorCode::OutOfStock => "OUT_OF_STOCK",
            ErrorCode::VersionConflict => "VERSION_CONFLICT",
            ErrorCode::InvalidTransition => "INVALID_TRANSITION",
            ErrorCode::SessionClosed => "SESSION_CLOSED",
            ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::ValidationFailed => "VALIDATION_FAILED",
            ErrorCode::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            ErrorCode::UnknownMenuItem => "UNKNOWN_MENU_ITEM",
            ErrorCode::InvalidTopping => "INVALID_TOPPING",
            ErrorCode::ItemUnavailable => "ITEM_UNAVAILABLE",
            ErrorCode::PinLocked => "PIN_LOCKED",
            ErrorCode::CooldownActive => "COOLDOWN_ACTIVE",
            ErrorCode::SessionRateLimited => "SESSION_RATE_LIMITED",
            ErrorCode::TooManyStreams => "TOO_MANY_STREAMS",
            ErrorCode::RequestTimeout => "REQUEST_TIMEOUT",
            ErrorCode::HeadersTooLarge => "HEADERS_TOO_LARGE",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::CatalogNotReady => "CATALOG_NOT_READY",
            ErrorCode::CatalogVersionConflict => "CATALOG_VERSION_CONFLICT",
            ErrorCode::InvalidOptions => "INVALID_OPTIONS",
            ErrorCode::InvalidImage => "INVALID_IMAGE",
            ErrorCode::TableNameTaken => "TABLE_NAME_TAKEN",
            ErrorCode::PrinterNameTaken => "PRINTER_NAME_TAKEN",
            ErrorCode::UsernameTaken => "USERNAME_TAKEN",
            ErrorCode::LoginFailed => "LOGIN_FAILED",
            ErrorCode::LoginLocked => "LOGIN_LOCKED",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::RecallExpired => "RECALL_EXPIRED",
            ErrorCode::NothingToRecall => "NOTHING_TO_RECALL",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            ErrorCode::MalformedRequest
            | ErrorCode::IdempotencyKeyMissing
            | ErrorCode::IdempotencyKeyInvalid
            | ErrorCode::ClientIdInvalid => 400,
            ErrorCode::Unauthorized | ErrorCode::PinInvalid | ErrorCode::LoginFailed => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::TableOccupied
            | ErrorCode::TableNameTaken
            | ErrorCode::PrinterNameTaken
            | ErrorCode::UsernameTaken
            | ErrorCode::StockNotTracked
            | ErrorCode::RequestInProgress
            | ErrorCode::DuplicatePayload
            | ErrorCode::SessionBusy
            | ErrorCode::OutOfStock
            | ErrorCode::VersionConflict
            | ErrorCode::InvalidTransition
            | ErrorCode::RecallExpired
            | ErrorCode::NothingToRecall => 409,
            ErrorCode::SessionClosed => 410,
            ErrorCode::CatalogVersionConflict => 412,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::ValidationFailed
            | ErrorCode::IdempotencyKeyReused
            | ErrorCode::UnknownMenuItem
            | ErrorCode::InvalidTopping
            | ErrorCode::InvalidOptions
            | ErrorCode::InvalidImage
            | ErrorCode::ItemUnavailable => 422,
            ErrorCode::RequestTimeout => 408,
            ErrorCode::HeadersTooLarge => 431,
            ErrorCode::PinLocked
            | ErrorCode::LoginLocked
            | ErrorCode::CooldownActive
            | ErrorCode::SessionRateLimited
            | ErrorCode::TooManyStreams => 429,
            ErrorCode::Internal => 500,
            ErrorCode::Unavailable | ErrorCode::CatalogNotReady => 503,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            ErrorCode::MalformedRequest => "Malformed request",
            ErrorCode::IdempotencyKeyMissing => "Idempotency-Key header required",
            ErrorCode::IdempotencyKeyInvalid => "Idempotency-Key is not a UUID v4",
            ErrorCode::ClientIdInvalid => "X-Client-Id missing or invalid",
            ErrorCode::Unauthorized => "Authentication required",
            ErrorCode::PinInvalid => "Wrong or missing session PIN",
            ErrorCode::NotFound => "Not found",
            ErrorCode::MethodNotAllowed => "Method not allowed",
            ErrorCode::TableOccupied => "Table already has an active session",
            ErrorCode::StockNotTracked => "Stock is not tracked for this item",
            ErrorCode::RequestInProgress => "A request with this key is still in progress",
            ErrorCode::DuplicatePayload => "This order was already placed",
            ErrorCode::SessionBusy => "The table is busy",
            ErrorCode::OutOfStock => "Out of stock",
            ErrorCode::VersionConflict => "The order changed since you last read it",
            ErrorCode::InvalidTransition => "That status change is not allowed",
            ErrorCode::SessionClosed => "The table session is closed",
            ErrorCode::PayloadTooLarge => "Request body too large",
            ErrorCode::UnsupportedMediaType => "Unsupported media type",
            ErrorCode::ValidationFailed => "Validation failed",
            ErrorCode::IdempotencyKeyReused => "Idempotency-Key reused with a different request",
            ErrorCode::UnknownMenuItem => "Unknown menu item",
            ErrorCode::InvalidTopping => "Invalid topping",
            ErrorCode::ItemUnavailable => "Item no longer available",
            ErrorCode::PinLocked => "Session PIN locked",
            ErrorCode::CooldownActive => "Please wait before ordering again",
            ErrorCode::SessionRateLimited => "Too many orders at this table",
            ErrorCode::TooManyStreams => "Too many event streams",
            ErrorCode::RequestTimeout => "The request took too long",
            ErrorCode::HeadersTooLarge => "Request headers too large",
            ErrorCode::Internal => "Internal error",
            ErrorCode::Unavailable => "Service unavailable",
            ErrorCode::CatalogNotReady => "Catalog not ready",
            ErrorCode::CatalogVersionConflict => "The catalog changed since you last read it",
            ErrorCode::InvalidOptions => "Invalid choice of options",
            ErrorCode::InvalidImage => "Not an image the menu can use",
            ErrorCode::TableNameTaken => "The shop has a table of that name",
            ErrorCode::PrinterNameTaken => "The shop has a printer of that name",
            ErrorCode::UsernameTaken => "An account has that username",
            ErrorCode::LoginFailed => "Wrong username or password",
            ErrorCode::LoginLocked => "Too many failed sign-ins",
            ErrorCode::Forbidden => "Not allowed for this credential",
            ErrorCode::RecallExpired => "Too late to recall that move",
            ErrorCode::NothingToRecall => "No move of this order to recall",
        }
    }

    /// `urn:ordergate:problem:<kebab-code>`.
    pub fn problem_type(self) -> String {
        format!(
            "urn:ordergate:problem:{}",
            self.as_str().to_ascii_lowercase().replace('_', "-")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_keeps_its_status() {
        let pinned: Vec<(&str, u16)> = ErrorCode::ALL
            .iter()
            .map(|code| (code.as_str(), code.status()))
            .collect();
        assert_eq!(
            pinned,
            [
                ("MALFORMED_REQUEST", 400),
                ("IDEMPOTENCY_KEY_MISSING", 400),
                ("IDEMPOTENCY_KEY_INVALID", 400),
                ("CLIENT_ID_INVALID", 400),
                ("UNAUTHORIZED", 401),
                ("PIN_INVALID", 401),
                ("NOT_FOUND", 404),
                ("METHOD_NOT_ALLOWED", 405),
                ("TABLE_OCCUPIED", 409),
                ("STOCK_NOT_TRACKED", 409),
                ("REQUEST_IN_PROGRESS", 409),
                ("DUPLICATE_PAYLOAD", 409),
                ("SESSION_BUSY", 409),
                ("OUT_OF_STOCK", 409),
                ("VERSION_CONFLICT", 409),
                ("INVALID_TRANSITION", 409),
                ("SESSION_CLOSED", 410),
                ("PAYLOAD_TOO_LARGE", 413),
                ("UNSUPPORTED_MEDIA_TYPE", 415),
                ("VALIDATION_FAILED", 422),
                ("IDEMPOTENCY_KEY_REUSED", 422),
                ("UNKNOWN_MENU_ITEM", 422),
                ("INVALID_TOPPING", 422),
                ("ITEM_UNAVAILABLE", 422),
                ("PIN_LOCKED", 429),
                ("COOLDOWN_ACTIVE", 429),
                ("SESSION_RATE_LIMITED", 429),
                ("TOO_MANY_STREAMS", 429),
                ("REQUEST_TIMEOUT", 408),
                ("HEADERS_TOO_LARGE", 431),
                ("INTERNAL", 500),
                ("UNAVAILABLE", 503),
                ("CATALOG_NOT_READY", 503),
                ("CATALOG_VERSION_CONFLICT", 412),
                ("INVALID_OPTIONS", 422),
                ("INVALID_IMAGE", 422),
                ("TABLE_NAME_TAKEN", 409),
                ("PRINTER_NAME_TAKEN", 409),
                ("USERNAME_TAKEN", 409),
                ("LOGIN_FAILED", 401),
                ("LOGIN_LOCKED", 429),
                ("FORBIDDEN", 403),
                ("RECALL_EXPIRED", 409),
                ("NOTHING_TO_RECALL", 409),
            ]
        );
    }

    #[test]
    fn problem_types_are_kebab_case_urns() {
        assert_eq!(
            ErrorCode::IdempotencyKeyReused.problem_type(),
            "urn:ordergate:problem:idempotency-key-reused"
        );
    }
}
