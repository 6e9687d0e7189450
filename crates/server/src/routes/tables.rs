//! The restaurant's tables: created once by staff, each with the permanent
//! link of its printed QR card (`/q/{code}`), which finds the party seated
//! there now.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use ordergate_domain::table::{NewTable, Table, TableState, is_table_code};
use ordergate_store::StaffWrite;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath};
use crate::idempotency::{Sent, StaffOperation, staff_claim, staff_write};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_table, list_tables))
        .routes(routes!(table_card))
}

/// A table as staff see it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct TableView {
    table_id: Uuid,
    name: String,
    /// `<public-url>/q/<code>`: print it once as the table's QR code.
    table_url: String,
    /// The session seated at the table now (`null`: free).
    session_id: Option<Uuid>,
    created_at: DateTime<Utc>,
}

impl TableView {
    fn new(table: &Table, session_id: Option<Uuid>, state: &AppState) -> TableView {
        TableView {
            table_id: table.table_id,
            name: table.name.clone(),
            table_url: format!("{}/q/{}", state.public_url(), table.code),
            session_id,
            created_at: table.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
struct TableList {
    tables: Vec<TableView>,
}

/// What a table's QR card tells anyone who scans it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct TableCard {
    shop_id: Uuid,
    table_name: String,
    /// The party seated now, whose PIN staff gave them (`null`: nobody).
    session_id: Option<Uuid>,
}

/// Create a table (staff), with the permanent link of its QR card.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/tables", tag = "tables",
    security(("staffToken" = [])),
    params(
        ("shopId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = NewTable,
    responses(
        (status = 201, description = "Created; print tableUrl as its QR code", body = TableView),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "The shop has a table of that name (TABLE_NAME_TAKEN)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn create_table(
    State(state): State<AppState>,
    _: Allowed<duty::Tables>,
    ApiPath(shop_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(new_table): ApiJson<NewTable>,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let operation = StaffOperation::CreateTable { shop_id };
    let claim = staff_claim(&headers, operation, &new_table, expires_at)?;
    let table = new_table.validate(shop_id, now)?;
    let viewer = state.clone();
    let render = move |table: &Table| {
        let view = TableView::new(table, None, &viewer);
        Sent::render(StatusCode::CREATED, &view, None)
    };
    staff_write(
        &state,
        claim,
        StaffWrite::CreateTable(table, Box::new(render)),
    )
    .await
}

/// The shop's tables (staff), by name, each with the session seated now.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/tables", tag = "tables",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "By name", body = TableList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_tables(
    State(state): State<AppState>,
    _: Allowed<duty::Tables>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<TableList>, ApiError> {
    let tables = state.store().tables(shop_id).await?;
    let tables = tables
        .iter()
        .map(|t| TableView::new(&t.table, t.session_id, &state))
        .collect();
    Ok(Json(TableList { tables }))
}

/// What a table's QR card opens (no auth): the shop, the table, and the
/// session seated there now, whose PIN its party has from staff.
#[utoipa::path(get, path = "/api/v1/tables/{code}", tag = "tables",
    params(("code" = String, Path, description = "The code of the table's card")),
    responses(
        (status = 200, description = "The table", body = TableCard),
        (status = 404, description = "No table has this code (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all)]
async fn table_card(
    State(state): State<AppState>,
    ApiPath(code): ApiPath<String>,
) -> Result<Json<TableCard>, ApiError> {
    let found = if is_table_code(&code) {
        state.store().table_by_code(&code).await?
    } else {
        None
    };
    let TableState { table, session_id } = found.ok_or_else(|| ApiError::not_found("table"))?;
    Ok(Json(TableCard {
        shop_id: table.shop_id,
        table_name: table.name,
        session_id,
    }))
}
