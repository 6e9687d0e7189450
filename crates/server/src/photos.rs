//! Menu photos: an upload decoded and checked by what its bytes are, never
//! by what its `Content-Type` says, and the rendition guests download made
//! from it once, at upload.
//!
//! A photo straight off a phone is 2–5 MiB and 4000 px wide; a guest
//! scrolling a menu on a table's Wi-Fi needs a few dozen KiB. The rendition
//! is a JPEG at most [`RENDITION_SIDE`] px on its longer side (a full-width
//! item sheet on a 3× phone screen), stripped of metadata, turned upright
//! by its EXIF orientation (which stripping would otherwise lose), its
//! transparency flattened onto white.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};

/// Most an upload may be: a phone photo saved for the web fits.
pub const MAX_UPLOAD_BYTES: usize = 1024 * 1024;
/// The longer side of the rendition, in pixels.
pub const RENDITION_SIDE: u32 = 800;
/// The most pixels an upload may decode to. A 1 MiB JPEG of a photo is a
/// few megapixels; a small file claiming far more is a decompression bomb.
pub const MAX_PIXELS: u64 = 40_000_000;
/// The longest side an upload may have.
const MAX_SIDE: u32 = 10_000;
/// JPEG quality of the rendition: no visible loss at phone size.
const RENDITION_QUALITY: u8 = 82;

/// An upload that passed, and what guests get of it.
#[derive(Debug, Clone)]
pub struct Checked {
    /// What the bytes are: `image/jpeg`, `image/png` or `image/webp`.
    pub content_type: &'static str,
    pub width: u32,
    pub height: u32,
    /// The rendition: a JPEG.
    pub rendition: Vec<u8>,
    pub rendition_width: u32,
    pub rendition_height: u32,
}

/// Why an upload is not a photo the menu can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the body is not a JPEG, PNG or WebP image")]
    NotAnImage,
    #[error(
        "the image has more pixels than a menu photo needs: at most {MAX_SIDE} px a side and \
         {} megapixels are taken",
        MAX_PIXELS / 1_000_000
    )]
    TooLarge,
    #[error("the image could not be decoded (truncated or damaged): {0}")]
    Damaged(String),
}

/// The content types an upload may declare.
pub fn accepted_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    ["image/jpeg", "image/png", "image/webp"]
        .iter()
        .any(|accepted| essence.eq_ignore_ascii_case(accepted))
}

/// Decodes `bytes` (within limits set before any pixel is allocated),
/// turns the picture upright and renders what guests get. CPU-bound: run
/// it off the async threads.
pub fn check(bytes: &[u8]) -> Result<Checked, Refused> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Refused::Damaged(e.to_string()))?;
    let content_type = match reader.format() {
        // The JPEG decoder fills a cut-off file in with grey rather than
        // complain; a whole JPEG ends with its end-of-image marker.
        Some(ImageFormat::Jpeg) if !bytes.ends_with(&[0xFF, 0xD9]) => {
            return Err(Refused::Damaged(
                "the JPEG ends before its end-of-image marker".into(),
            ));
        }
        Some(ImageFormat::Jpeg) => "image/jpeg",
        Some(ImageFormat::Png) => "image/png",
        Some(ImageFormat::WebP) => "image/webp",
        _ => return Err(Refused::NotAnImage),
    };
    let mut reader = reader;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    // Four bytes a pixel of the largest image taken, and room to work.
    limits.max_alloc = Some(MAX_PIXELS * 4 * 2);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(refusal)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(Refused::TooLarge);
    }
    let orientation = decoder.orientation().map_err(refusal)?;
    let mut picture = DynamicImage::from_decoder(decoder).map_err(refusal)?;
    picture.apply_orientation(orientation);
    let rendition = rendition(&picture);
    let mut jpeg = Vec::new();
    JpegEncoder::new_with_quality(&mut jpeg, RENDITION_QUALITY)
        .encode_image(&rendition)
        .map_err(|e| Refused::Damaged(e.to_string()))?;
    Ok(Checked {
        content_type,
        width: picture.width(),
        height: picture.height(),
        rendition: jpeg,
        rendition_width: rendition.width(),
        rendition_height: rendition.height(),
    })
}

/// The picture scaled down to fit [`RENDITION_SIDE`] (never up), on white.
fn rendition(picture: &DynamicImage) -> RgbImage {
    let fitted = if picture.width().max(picture.height()) > RENDITION_SIDE {
        picture.resize(RENDITION_SIDE, RENDITION_SIDE, FilterType::CatmullRom)
    } else {
        picture.clone()
    };
    let rgba = fitted.to_rgba8();
    let mut flat = RgbImage::new(rgba.width(), rgba.height());
    for (to, from) in flat.pixels_mut().zip(rgba.pixels()) {
        let [r, g, b, a] = from.0;
        let over_white =
            |c: u8| ((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a))) / 255) as u8;
        to.0 = [over_white(r), over_white(g), over_white(b)];
    }
    flat
}

/// A decoder's complaint as a refusal: limits are the image's size, the
/// rest damage.
fn refusal(error: image::ImageError) -> Refused {
    match error {
        image::ImageError::Limits(_) => Refused::TooLarge,
        other => Refused::Damaged(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgba, RgbaImage};

    fn encoded(format: ImageFormat, width: u32, height: u32) -> Vec<u8> {
        let picture = RgbaImage::from_fn(width, height, |x, y| {
            Rgba([
                (x % 256) as u8,
                (y % 256) as u8,
                128,
                if x < 4 { 0 } else { 255 },
            ])
        });
        let mut bytes = Vec::new();
        let picture = match format {
            ImageFormat::Jpeg => {
                DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(picture).to_rgb8())
            }
            _ => DynamicImage::ImageRgba8(picture),
        };
        picture
            .write_to(&mut Cursor::new(&mut bytes), format)
            .unwrap();
        bytes
    }

    #[test]
    fn photos_of_each_format_become_phone_sized_jpegs() {
        for (format, content_type) in [
            (ImageFormat::Png, "image/png"),
            (ImageFormat::Jpeg, "image/jpeg"),
            (ImageFormat::WebP, "image/webp"),
        ] {
            let checked = check(&encoded(format, 1000, 750)).unwrap();
            assert_eq!(checked.content_type, content_type);
            assert_eq!((checked.width, checked.height), (1000, 750));
            assert_eq!(
                (checked.rendition_width, checked.rendition_height),
                (800, 600)
            );
            let again = image::load_from_memory(&checked.rendition).unwrap();
            assert_eq!(
                image::guess_format(&checked.rendition).unwrap(),
                ImageFormat::Jpeg
            );
            assert_eq!((again.width(), again.height()), (800, 600));
        }
        let small = check(&encoded(ImageFormat::Png, 300, 200)).unwrap();
        assert_eq!(
            (small.rendition_width, small.rendition_height),
            (300, 200),
            "never scaled up"
        );
        let flattened = image::load_from_memory(&small.rendition).unwrap().to_rgb8();
        assert!(
            flattened.get_pixel(0, 0).0.iter().all(|&c| c > 240),
            "transparency becomes white"
        );
    }

    #[test]
    fn what_is_not_a_whole_image_is_refused() {
        assert_eq!(
            check(b"just some text, named photo.png").err(),
            Some(Refused::NotAnImage)
        );
        let jpeg = encoded(ImageFormat::Jpeg, 640, 480);
        assert!(matches!(
            check(&jpeg[..jpeg.len() / 2]),
            Err(Refused::Damaged(_))
        ));
        let wide = encoded(ImageFormat::Png, MAX_SIDE + 1, 1);
        assert_eq!(
            check(&wide).err(),
            Some(Refused::TooLarge),
            "one side too long"
        );
        assert!(accepted_type("image/webp"));
        assert!(accepted_type("IMAGE/JPEG; charset=binary"));
        assert!(!accepted_type("image/gif"));
        assert!(!accepted_type("text/plain"));
    }
}
