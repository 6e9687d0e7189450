//! Menu photos: staff upload them, guests' phones fetch the rendition.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ordergate_domain::menu::image_path;
use ordergate_store::{Photo, Rendition};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, ErrorCode, Problem};
use crate::etag::matches_any;
use crate::extract::ApiPath;
use crate::photos::{self, MAX_UPLOAD_BYTES, Refused};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload_photo))
        .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
        .routes(routes!(get_photo))
}

/// A photo as stored.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UploadedPhoto {
    image_id: Uuid,
    /// Where guests get it: the phone-sized rendition, from the server's root.
    #[schema(example = "/images/0193b3c4-5a1e-7000-8000-000000000000")]
    url: String,
    /// What the upload is (decoded, not as its Content-Type said).
    content_type: &'static str,
    /// Of the upload, once turned upright.
    width: u32,
    height: u32,
}

/// Upload a menu photo (staff).
///
/// The body is the image itself: a JPEG, PNG or WebP of at most 1 MiB. It
/// is decoded and checked for what its bytes are, whatever its
/// Content-Type says, and a phone-sized rendition (a JPEG, at most 800 px
/// on its longer side, turned upright) is made from it. Refer to it from a
/// catalog item as `imageId`.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/images", tag = "catalog",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    request_body(description = "The image's bytes",
        content((Vec<u8> = "image/jpeg"), (Vec<u8> = "image/png"), (Vec<u8> = "image/webp"))),
    responses(
        (status = 201, description = "Stored", body = UploadedPhoto,
         headers(("Location" = String, description = "The rendition's URL"))),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 413, description = "Body over 1 MiB (PAYLOAD_TOO_LARGE)", body = Problem,
         content_type = "application/problem+json"),
        (status = 415, description = "Content-Type is not image/jpeg, image/png or image/webp \
                                      (UNSUPPORTED_MEDIA_TYPE)", body = Problem,
         content_type = "application/problem+json"),
        (status = 422, description = "Not a whole image of those formats, or too many pixels \
                                      (INVALID_IMAGE)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn upload_photo(
    State(state): State<AppState>,
    _: Allowed<duty::Catalog>,
    ApiPath(shop_id): ApiPath<Uuid>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !photos::accepted_type(declared) {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send the photo's bytes as the body, with Content-Type image/jpeg, image/png or \
             image/webp",
        ));
    }
    let body = body.map_err(too_large)?;
    let upload = body.clone();
    let checked = tokio::task::spawn_blocking(move || photos::check(&upload))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "photo check failed to run");
            ApiError::new(ErrorCode::Internal, "an internal error occurred")
        })?
        .map_err(invalid)?;
    let photo = Photo {
        image_id: Uuid::now_v7(),
        shop_id,
        content_type: checked.content_type.to_owned(),
        width: checked.width.into(),
        height: checked.height.into(),
        original: body.to_vec(),
        rendition: Rendition {
            bytes: checked.rendition,
            width: checked.rendition_width.into(),
            height: checked.rendition_height.into(),
        },
        created_at: state.now(),
    };
    let image_id = photo.image_id;
    state.store().add_photo(photo).await?;
    let url = image_path(image_id);
    let location = HeaderValue::from_str(&url)
        .map_err(|_| ApiError::new(ErrorCode::Internal, "an internal error occurred"))?;
    let uploaded = UploadedPhoto {
        image_id,
        url,
        content_type: checked.content_type,
        width: checked.width,
        height: checked.height,
    };
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(uploaded),
    )
        .into_response())
}

fn too_large(rejection: BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "a photo may be {} MiB at most: save it smaller (a phone shows 800 px)",
                MAX_UPLOAD_BYTES / (1024 * 1024)
            ),
        )
    } else {
        ApiError::new(ErrorCode::MalformedRequest, rejection.body_text())
    }
}

fn invalid(refused: Refused) -> ApiError {
    ApiError::new(ErrorCode::InvalidImage, refused.to_string())
}

/// A menu photo, as guests' phones show it.
///
/// A JPEG at most 800 px on its longer side. A photo never changes: it is
/// sent with `Cache-Control: immutable`, and its `ETag` answers
/// `If-None-Match` with 304.
#[utoipa::path(get, path = "/images/{imageId}", tag = "menu",
    params(("imageId" = Uuid, Path)),
    responses(
        (status = 200, description = "The photo", content_type = "image/jpeg", body = Vec<u8>),
        (status = 304, description = "The client holds it already"),
        (status = 404, description = "No such photo (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%image_id))]
async fn get_photo(
    State(state): State<AppState>,
    ApiPath(image_id): ApiPath<Uuid>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let etag = HeaderValue::from_str(&format!("\"{image_id}\""))
        .map_err(|_| ApiError::new(ErrorCode::Internal, "an internal error occurred"))?;
    let cache = [
        (header::ETAG, etag.clone()),
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ),
    ];
    if matches_any(&headers, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    let bytes = state
        .photo_cache()
        .get(state.store(), image_id)
        .await?
        .ok_or_else(|| ApiError::not_found("photo"))?;
    let jpeg = [(header::CONTENT_TYPE, HeaderValue::from_static("image/jpeg"))];
    Ok((cache, jpeg, bytes).into_response())
}
