//! Menu photos over HTTP: JPEG, PNG and WebP uploads decoded and made into
//! phone-sized renditions served immutable; anything that is not a whole,
//! reasonably sized image of those formats refused with problem+json and
//! nothing stored.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{TestApp, find};

pub fn photo(format: ImageFormat, width: u32, height: u32) -> Vec<u8> {
    let picture = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])
    });
    let mut bytes = Vec::new();
    DynamicImage::ImageRgb8(picture)
        .write_to(&mut Cursor::new(&mut bytes), format)
        .unwrap();
    bytes
}

/// A PNG that claims 20000×20000 pixels (1.6 GB decoded) in a few hundred
/// bytes: a header, and the start of its first row.
fn decompression_bomb() -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = (crc >> 1) ^ (0xEDB8_8320 & (!(crc & 1)).wrapping_add(1));
            }
        }
        !crc
    }
    fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        png.extend((data.len() as u32).to_be_bytes());
        let mut typed = kind.to_vec();
        typed.extend(data);
        png.extend(&typed);
        png.extend(crc32(&typed).to_be_bytes());
    }
    let side = 20_000u32;
    let mut header = Vec::new();
    header.extend(side.to_be_bytes());
    header.extend(side.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]); // 8-bit RGB, deflate, no filter, no interlace
    // A zlib stream of one stored deflate block of zeros, then its Adler-32
    // (of n zeros: a = 1, b = n).
    let zeros = [0u8; 256];
    let n = zeros.len() as u16;
    let mut idat = vec![0x78, 0x01, 0x01];
    idat.extend(n.to_le_bytes());
    idat.extend((!n).to_le_bytes());
    idat.extend(zeros);
    idat.extend(((u32::from(n) << 16) | 1).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &idat);
    chunk(&mut png, b"IEND", &[]);
    png
}

#[tokio::test]
async fn jpeg_png_and_webp_uploads_become_phone_sized_renditions_served_immutable() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    for (format, content_type) in [
        (ImageFormat::Jpeg, "image/jpeg"),
        (ImageFormat::Png, "image/png"),
        (ImageFormat::WebP, "image/webp"),
    ] {
        let upload = photo(format, 1200, 900);
        let reply = app.upload_photo(&shop, content_type, upload).await;
        let body = reply.assert_status(201).clone();
        let id = body["imageId"].as_str().unwrap().to_owned();
        assert_eq!(
            body,
            json!({"imageId": id, "url": format!("/images/{id}"), "contentType": content_type,
                   "width": 1200, "height": 900}),
        );
        assert_eq!(
            reply.header("location"),
            Some(format!("/images/{id}").as_str())
        );

        let (status, headers, rendition) = app.get_bytes(&format!("/images/{id}"), None).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "image/jpeg");
        assert_eq!(
            headers["cache-control"],
            "public, max-age=31536000, immutable"
        );
        let decoded = image::load_from_memory(&rendition).unwrap();
        assert_eq!(
            (decoded.width(), decoded.height()),
            (800, 600),
            "{content_type}"
        );
        let etag = headers["etag"].to_str().unwrap();
        let (again, _, empty) = app.get_bytes(&format!("/images/{id}"), Some(etag)).await;
        assert_eq!((again, empty.len()), (304, 0));
    }
    // The bytes decide, not the header: a PNG sent as image/jpeg is a PNG.
    let mislabelled = app
        .upload_photo(&shop, "image/jpeg", photo(ImageFormat::Png, 40, 30))
        .await;
    assert_eq!(mislabelled.assert_status(201)["contentType"], "image/png");
    assert_eq!(app.count_rows("images").await, 4);
    let unknown = app.get(&format!("/images/{}", Uuid::new_v4())).await;
    unknown.assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn what_is_not_a_whole_reasonable_image_is_refused_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let jpeg = photo(ImageFormat::Jpeg, 640, 480);
    let refusals = [
        (
            "image/png",
            b"a shopping list, renamed photo.png".to_vec(),
            422,
            "INVALID_IMAGE",
        ),
        (
            "image/jpeg",
            jpeg[..jpeg.len() / 2].to_vec(),
            422,
            "INVALID_IMAGE",
        ),
        ("image/png", decompression_bomb(), 422, "INVALID_IMAGE"),
        (
            "image/jpeg",
            vec![0xFF; 2 * 1024 * 1024],
            413,
            "PAYLOAD_TOO_LARGE",
        ),
        ("text/plain", jpeg.clone(), 415, "UNSUPPORTED_MEDIA_TYPE"),
        ("image/gif", jpeg.clone(), 415, "UNSUPPORTED_MEDIA_TYPE"),
    ];
    for (content_type, bytes, status, code) in refusals {
        let reply = app.upload_photo(&shop, content_type, bytes).await;
        reply.assert_problem(status, code);
    }
    let bomb = app
        .upload_photo(&shop, "image/png", decompression_bomb())
        .await;
    assert!(
        bomb.body["detail"]
            .as_str()
            .unwrap()
            .contains("more pixels"),
        "{}",
        bomb.text
    );
    let anonymous = TestApp::send(
        app.request(
            reqwest::Method::POST,
            &format!("/api/v1/shops/{shop}/images"),
        )
        .header("Content-Type", "image/jpeg")
        .body(jpeg.clone()),
    )
    .await;
    anonymous.assert_problem(401, "UNAUTHORIZED");
    let nowhere = app
        .upload_photo(&Uuid::new_v4().to_string(), "image/jpeg", jpeg)
        .await;
    nowhere.assert_problem(404, "NOT_FOUND");
    assert_eq!(app.count_rows("images").await, 0);
}

#[tokio::test]
async fn the_menu_shows_an_items_photo_of_its_own_shop() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let other = app.shop().await;
    let upload = |shop: String| {
        let app = &app;
        async move {
            let reply = app
                .upload_photo(&shop, "image/png", photo(ImageFormat::Png, 100, 100))
                .await;
            reply.assert_status(201)["imageId"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let ours = upload(shop.clone()).await;
    let theirs = upload(other).await;

    let mut catalog = ids.catalog();
    catalog["items"][0]["imageId"] = json!(theirs);
    let refused = app.put_catalog(&shop, catalog.clone()).await;
    assert_eq!(refused.invalid_fields(), ["items[0].imageId"]);
    catalog["items"][0]["imageId"] = json!(ours);
    app.put_catalog(&shop, catalog).await.assert_status(200);
    let menu = app.menu(&shop).await;
    let curry = find(&menu.assert_status(200)["items"], "menuItemId", &ids.curry);
    assert_eq!(
        (curry["imageId"].clone(), curry["imageUrl"].clone()),
        (json!(ours), json!(format!("/images/{ours}")))
    );
    let soup = find(&menu.body["items"], "menuItemId", &ids.soup);
    assert_eq!(
        (soup["imageId"].clone(), soup["imageUrl"].clone()),
        (json!(null), json!(null))
    );
    assert_eq!(
        app.get_catalog(&shop).await.body["items"][0]["imageId"],
        json!(ours)
    );
}
