//! Operational endpoints: health and readiness for load balancers, metrics
//! for the scraper, and the OpenAPI document.

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::accounts::Actor;
use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(openapi_json))
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "The process is up", body = String)))]
async fn healthz() -> &'static str {
    "ok"
}

/// Readiness: the database answers.
#[utoipa::path(get, path = "/readyz", tag = "operations", responses(
    (status = 200, description = "Ready to take traffic", body = String),
    (status = 503, description = "The database does not answer (UNAVAILABLE)",
     body = crate::error::Problem, content_type = "application/problem+json"),
))]
async fn readyz(State(state): State<AppState>) -> Result<&'static str, ApiError> {
    state.store().ping().await.map_err(|e| {
        tracing::warn!(error = %e, "readiness check failed");
        ApiError::new(ErrorCode::Unavailable, "the database does not answer").retry_after(5)
    })?;
    Ok("ready")
}

/// Prometheus metrics.
///
/// Send the staff token or the metrics token (`--metrics-token`) as a
/// bearer token; a server started with `--metrics-public` asks for none.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    security(("staffToken" = [])),
    responses(
        (status = 200, description = "OpenMetrics text exposition", body = String,
         content_type = "application/openmetrics-text"),
    ),
)]
async fn metrics(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    if !state.metrics_access().admits(&headers) {
        let actor = Actor::of(&state, &headers).await?;
        if !matches!(actor, Actor::Admin) {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the platform administrator or the metrics token may read metrics",
            ));
        }
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics().render(),
    ))
}

/// This document.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "operations", responses(
    (status = 200, description = "The OpenAPI 3.1 document of this API", body = Object),
))]
async fn openapi_json(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.openapi_json().to_owned(),
    )
}
