//! Devices (API v1.1): a shop's kitchen displays and floor tablets, each
//! signed in for good with a token of its own until revoked.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use ordergate_domain::staff::{Device, NewDevice, Role, generate_device_token, staff_token_digest};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_device, list_devices))
        .routes(routes!(revoke_device))
}

/// A new device with its token, which is shown this once.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct NewDeviceToken {
    device_id: Uuid,
    name: String,
    role: Role,
    /// The device sends it as `Authorization: Bearer <token>` (or
    /// `?access_token=` on event streams). Only its digest is kept.
    token: String,
}

#[derive(Serialize, ToSchema)]
struct DeviceList {
    devices: Vec<Device>,
}

/// Create a kitchen display or floor tablet (owners and managers): a
/// long-lived credential in the role `kitchen` or `floor`.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/devices", tag = "staff",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    request_body = NewDevice,
    responses(
        (status = 201, description = "Created; the token is shown only now", body = NewDeviceToken),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn create_device(
    State(state): State<AppState>,
    _: Allowed<duty::Devices>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiJson(new_device): ApiJson<NewDevice>,
) -> Result<(StatusCode, Json<NewDeviceToken>), ApiError> {
    let new_device = new_device.validate()?;
    let token = generate_device_token();
    let device = Device {
        device_id: Uuid::new_v4(),
        shop_id,
        name: new_device.name,
        role: new_device.role,
        created_at: state.now(),
    };
    state
        .store()
        .create_device(device.clone(), staff_token_digest(&token))
        .await?;
    let created = NewDeviceToken {
        device_id: device.device_id,
        name: device.name,
        role: device.role,
        token,
    };
    Ok((StatusCode::CREATED, Json(created)))
}

/// The shop's devices, oldest first (owners and managers); their tokens
/// are not kept and cannot be shown again.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/devices", tag = "staff",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "Oldest first", body = DeviceList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_devices(
    State(state): State<AppState>,
    _: Allowed<duty::Devices>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<DeviceList>, ApiError> {
    let devices = state.store().devices(shop_id).await?;
    Ok(Json(DeviceList { devices }))
}

/// Revoke a device (owners and managers): its token stops working at
/// once, and its open event streams end.
#[utoipa::path(delete, path = "/api/v1/shops/{shopId}/devices/{deviceId}", tag = "staff",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), ("deviceId" = Uuid, Path)),
    responses(
        (status = 204, description = "Revoked"),
        (status = 404, description = "No such device in this shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id, %device_id))]
async fn revoke_device(
    State(state): State<AppState>,
    _: Allowed<duty::Devices>,
    ApiPath((shop_id, device_id)): ApiPath<(Uuid, Uuid)>,
) -> Result<StatusCode, ApiError> {
    state.store().revoke_device(shop_id, device_id).await?;
    state.revoked();
    Ok(StatusCode::NO_CONTENT)
}
