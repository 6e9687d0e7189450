//! The OpenAPI 3.1 document, generated from the handlers' annotations.
//!
//! Refusals every operation of a kind can give (401 without a staff token,
//! 400/413/415/422 for a body, 503 when the database is down) are added here
//! from each operation's own security, body and parameters, so the document
//! cannot forget one that the server sends.

use serde_json::{Value, json};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "ordergate",
        description = "Restaurant table ordering: every order a guest sends reaches the kitchen exactly once.",
    ),
    modifiers(&SecuritySchemes),
    components(schemas(crate::error::Problem)),
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "staffToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A staff credential: the platform administrator's --staff-token, a signed-in \
                         account's token (POST /api/v1/auth/login) or a device token. An account \
                         or device acts only in its shops, as its role there allows.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "guestToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A guest token of the session, from POST /api/v1/sessions/{sessionId}/access",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "sessionPin",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Session-PIN",
                "The table session's six-digit PIN",
            ))),
        );
    }
}

/// The document as served, with the shared refusals filled in.
pub fn render(document: utoipa::openapi::OpenApi) -> String {
    let mut document = serde_json::to_value(document).unwrap_or(Value::Null);
    if let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for operation in item.values_mut().filter_map(Value::as_object_mut) {
                add_shared_problems(path, operation);
            }
        }
    }
    serde_json::to_string(&document).unwrap_or_default()
}

fn add_shared_problems(path: &str, operation: &mut serde_json::Map<String, Value>) {
    let shared = shared_problems(path, operation);
    let responses = operation
        .entry("responses")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    let Some(responses) = responses else { return };
    for (status, description) in shared {
        responses
            .entry(status)
            .or_insert_with(|| problem_response(description));
    }
}

/// The problem responses `operation` can give besides its own: by its
/// credentials, body, parameters and path.
fn shared_problems(
    path: &str,
    operation: &serde_json::Map<String, Value>,
) -> Vec<(&'static str, &'static str)> {
    let security = operation.get("security").cloned().unwrap_or(Value::Null);
    let requires = |scheme: &str| {
        security
            .as_array()
            .is_some_and(|alternatives| alternatives.iter().any(|alt| alt.get(scheme).is_some()))
    };
    let has_body = operation.contains_key("requestBody");
    let has_param = |name: &str| {
        operation
            .get("parameters")
            .and_then(Value::as_array)
            .is_some_and(|params| params.iter().any(|p| p["name"] == name))
    };
    let has_limit = has_param("limit");
    let has_key = has_param("Idempotency-Key");

    let mut shared = Vec::new();
    if requires("staffToken") && !requires("sessionPin") {
        shared.push((
            "401",
            "Missing, wrong, expired or revoked credential (UNAUTHORIZED)",
        ));
    }
    if requires("staffToken") {
        shared.push((
            "403",
            "A credential of another shop, or of a role without this right (FORBIDDEN)",
        ));
    }
    if requires("sessionPin") || requires("guestToken") {
        shared.push((
            "401",
            "Missing or wrong credentials (PIN_INVALID, UNAUTHORIZED)",
        ));
        shared.push((
            "429",
            "Too many wrong PINs: locked for a while (PIN_LOCKED)",
        ));
        shared.push((
            "410",
            "The table was checked out longer ago than the grace (SESSION_CLOSED)",
        ));
    }
    if has_body {
        shared.push((
            "400",
            "Body is not valid JSON for this operation (MALFORMED_REQUEST)",
        ));
        shared.push(("413", "Body over 16 KiB (PAYLOAD_TOO_LARGE)"));
        shared.push((
            "415",
            "Body is not application/json (UNSUPPORTED_MEDIA_TYPE)",
        ));
    }
    if has_key && !has_body {
        shared.push((
            "400",
            "Idempotency-Key is not a UUID v4 (IDEMPOTENCY_KEY_INVALID)",
        ));
    }
    if has_body || has_limit || has_key {
        shared.push((
            "422",
            "Invalid field values (VALIDATION_FAILED), or an \
                             Idempotency-Key reused for another request (IDEMPOTENCY_KEY_REUSED)",
        ));
    }
    shared.push((
        "408",
        "The request did not arrive and finish within the request timeout (REQUEST_TIMEOUT)",
    ));
    shared.push(("431", "Request headers over 16 KiB (HEADERS_TOO_LARGE)"));
    if path.starts_with("/api/v1/") && path != "/api/v1/openapi.json" {
        shared.push((
            "503",
            "The database is unavailable; retry later (UNAVAILABLE)",
        ));
    }
    shared
}

fn problem_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {
            "application/problem+json": {
                "schema": { "$ref": "#/components/schemas/Problem" }
            }
        }
    })
}
