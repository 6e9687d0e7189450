//! One module per resource, each with its own `router()`, merged here.

use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::app::AppState;
use crate::openapi::ApiDoc;

mod catalog;
mod devices;
mod events;
mod images;
mod inventory;
mod kitchen;
mod menu;
mod ops;
mod orders;
mod pages;
mod printers;
mod service;
mod sessions;
mod shops;
mod staff;
mod tables;

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(ops::router())
        .merge(shops::router())
        .merge(staff::router())
        .merge(devices::router())
        .merge(catalog::router())
        .merge(images::router())
        .merge(menu::router())
        .merge(inventory::router())
        .merge(tables::router())
        .merge(sessions::router())
        .merge(service::router())
        .merge(orders::router())
        .merge(kitchen::router())
        .merge(printers::router())
        .merge(events::router())
        .merge(pages::router())
}
