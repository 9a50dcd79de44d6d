//! Pets' photos. An upload (JPEG, PNG or WebP, as its Content-Type says and its bytes
//! confirm) is decoded within limits, turned upright by its EXIF orientation, and kept
//! only as pixels: re-encoded as WebP at each of [`PHOTO_WIDTHS`], so no metadata (a
//! camera's GPS position, say) and nothing but an image ever reaches a visitor. The
//! widths are stored in the database beside the pet (a backup stays one file) under a
//! hash of their content, which their URLs name: a URL always means the same bytes, so
//! browsers may keep them for a year.

use std::borrow::Cow;
use std::io::Cursor;
use std::sync::{Arc, LazyLock};

use image::imageops::{self, FilterType};
use image::metadata::Orientation;
use image::{DynamicImage, ImageBuffer, ImageDecoder, ImageFormat};
use sha2::{Digest, Sha256};

use crate::db::{Db, sql};
use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::{EventType, PHOTO_WIDTHS, Pet};
use crate::services::events::{self, Audience};
use crate::services::inventory::state_for_update;

/// The largest upload taken (contract.md, "Pet content"); the API refuses a longer body
/// with 413 before reading it.
pub const MAX_UPLOAD_BYTES: usize = 5 * 1024 * 1024;
/// The most pixels an upload may have: a phone's 48-megapixel photo fits, while a few
/// kilobytes of PNG claiming 100,000 × 100,000 (a decompression bomb) is refused from
/// its header, before anything is allocated.
pub const MAX_PIXELS: u64 = 50_000_000;
/// The most memory the decoded picture may take (a 50-megapixel photo at 8 bits a
/// channel with alpha); checked from the header too: 16-bit channels count twice.
pub const MAX_DECODED_BYTES: u64 = MAX_PIXELS * 4;
/// The longest side an upload may have.
const MAX_SIDE: u32 = 20_000;
/// WebP quality (libwebp's 0 to 100): a photo 640 wide is about 40 KB.
const QUALITY: f32 = 80.0;
/// A stored photo is at most twice as tall as it is wide, or twice as wide as tall:
/// beyond, its middle is kept (a panorama standing up would be a very long page, and
/// lying down a sliver in the shop's 4:3 frames).
const MAX_ASPECT: u32 = 2;

/// How many uploads are worked on at once in this process: one takes up to about
/// [`MAX_DECODED_BYTES`] and a half while it is (the decoded picture, its 8-bit copy when
/// it had 16-bit channels, the first reduction), and a core; the next waits its turn.
static DECODING: LazyLock<Arc<tokio::sync::Semaphore>> = LazyLock::new(|| Arc::new(tokio::sync::Semaphore::new(1)));

/// The image types a photo may be sent as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    Webp,
}

impl Format {
    /// What the 415 says is accepted.
    pub const ACCEPTED: &str = "image/jpeg, image/png, image/webp or application/octet-stream";

    /// The format of an upload sent with `content_type`: the image type it names, or,
    /// sent as `application/octet-stream` (what generated API clients send a file as),
    /// the one its first bytes say.
    pub fn of_upload(content_type: Option<&str>, bytes: &[u8]) -> AppResult<Format> {
        let essence = content_type.map(|sent| sent.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
        if essence.as_deref() == Some("application/octet-stream") {
            return Format::sniff(bytes).ok_or_else(|| invalid("the body is not a JPEG, PNG or WebP image"));
        }
        content_type.and_then(Format::of_content_type).ok_or_else(|| unsupported(content_type))
    }

    /// The format the file's signature (its first bytes) names.
    fn sniff(bytes: &[u8]) -> Option<Format> {
        match bytes {
            [0xFF, 0xD8, 0xFF, ..] => Some(Format::Jpeg),
            [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, ..] => Some(Format::Png),
            [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some(Format::Webp),
            _ => None,
        }
    }

    /// The format a `Content-Type` names (parameters and case aside); `None` for any
    /// other type.
    pub fn of_content_type(content_type: &str) -> Option<Format> {
        let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match essence.as_str() {
            "image/jpeg" => Some(Format::Jpeg),
            "image/png" => Some(Format::Png),
            "image/webp" => Some(Format::Webp),
            _ => None,
        }
    }

    fn image_format(self) -> ImageFormat {
        match self {
            Format::Jpeg => ImageFormat::Jpeg,
            Format::Png => ImageFormat::Png,
            Format::Webp => ImageFormat::WebP,
        }
    }
}

/// The 415 for a body that is not sent as one of the accepted types.
pub fn unsupported(content_type: Option<&str>) -> AppError {
    let sent = content_type.map_or_else(|| "no Content-Type".to_owned(), |sent| format!("Content-Type {sent:?}"));
    AppError::new(ErrorCode::UnsupportedMediaType, format!("a photo is sent as {}, not with {sent}", Format::ACCEPTED))
}

/// A photo ready to store: each width's WebP and the hash of them all.
#[derive(Clone, Debug)]
pub struct Encoded {
    pub hash: String,
    pub variants: Vec<(u32, Vec<u8>)>,
}

impl Encoded {
    /// The photo of these widths, named by a hash of them all (64 bits of SHA-256, in
    /// hex: a URL needs no more to tell one photo of a pet from the next).
    pub fn new(variants: Vec<(u32, Vec<u8>)>) -> Encoded {
        let mut digest = Sha256::new();
        for (width, bytes) in &variants {
            digest.update(width.to_be_bytes());
            digest.update(bytes);
        }
        let hash = digest.finalize().iter().take(8).map(|byte| format!("{byte:02x}")).collect();
        Encoded { hash, variants }
    }
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::InvalidImage, message)
}

/// Decodes `bytes` as `format` and encodes every width. Takes a core for a while (about
/// half a second for a 12-megapixel JPEG): [`set`] runs it on a blocking thread.
pub fn encode(format: Format, bytes: &[u8]) -> AppResult<Encoded> {
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(AppError::new(
            ErrorCode::PayloadTooLarge,
            format!("a photo is at most {MAX_UPLOAD_BYTES} bytes (got {})", bytes.len()),
        ));
    }
    let (decoded, orientation) = decode(format, bytes)?;
    // Upright, the widest is at most this wide (its height follows, within the shape);
    // turned a quarter, that bound is on what is stored as its height.
    let widest = PHOTO_WIDTHS[PHOTO_WIDTHS.len() - 1];
    let quarter = matches!(
        orientation,
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    );
    let bound = if quarter { (u32::MAX, widest) } else { (widest, u32::MAX) };
    // Reduced (and cut to shape) from the decoded picture as it is stored, then turned
    // upright: turning the small one costs little, the large one a second copy.
    let mut largest = match decoded {
        Pixels::Rgb(image) => DynamicImage::ImageRgb8(reduce(&image, bound)),
        Pixels::Rgba(image) => DynamicImage::ImageRgba8(reduce(&image, bound)),
    };
    largest.apply_orientation(orientation);
    let mut variants = Vec::with_capacity(PHOTO_WIDTHS.len());
    for &width in PHOTO_WIDTHS.iter().rev() {
        let resized = match &largest {
            DynamicImage::ImageRgba8(image) => DynamicImage::ImageRgba8(reduce(image, (width, u32::MAX))),
            other => DynamicImage::ImageRgb8(reduce(&other.to_rgb8(), (width, u32::MAX))),
        };
        variants.push((width, webp(&resized)?));
    }
    variants.reverse();
    Ok(Encoded::new(variants))
}

/// A decoded picture in 8 bits a channel, with or without alpha.
enum Pixels {
    Rgb(image::RgbImage),
    Rgba(image::RgbaImage),
}

/// The upload's pixels as stored and the turn that shows them upright, after checking
/// that the bytes are the image their Content-Type says and that they fit the limits.
fn decode(format: Format, bytes: &[u8]) -> AppResult<(Pixels, Orientation)> {
    let name = |format: ImageFormat| format!("{format:?}").to_uppercase().replace("WEBP", "WebP");
    match image::guess_format(bytes) {
        Ok(found) if found == format.image_format() => {}
        Ok(found) => {
            return Err(invalid(format!(
                "the body is a {} image, not {} as its Content-Type says",
                name(found),
                name(format.image_format())
            )));
        }
        Err(_) => return Err(invalid(format!("the body is not a {} image", name(format.image_format())))),
    }
    if format == Format::Jpeg && !jpeg_is_whole(bytes) {
        return Err(invalid("the image is damaged or incomplete: the JPEG ends before its last scan does"));
    }
    let bytes = if format == Format::Png { png_without_compressed_metadata(bytes) } else { Cow::Borrowed(bytes) };
    let mut reader = image::ImageReader::with_format(Cursor::new(&bytes[..]), format.image_format());
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(decoding_failed)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(invalid(format!(
            "the image is {width} × {height} pixels; a photo has at most {} megapixels",
            MAX_PIXELS / 1_000_000
        )));
    }
    if width == 0 || height == 0 {
        return Err(invalid("the image has no pixels"));
    }
    // From the header too, before the buffer is made (`into_decoder` does not count
    // it against `max_alloc`): 16-bit channels take twice the memory.
    if decoder.total_bytes() > MAX_DECODED_BYTES {
        return Err(invalid(format!(
            "the image is {width} × {height} pixels of {:?}, over {} MB decoded; a photo of 8 bits a channel fits",
            decoder.color_type(),
            MAX_DECODED_BYTES / 1_000_000
        )));
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let image = DynamicImage::from_decoder(decoder).map_err(decoding_failed)?;
    let pixels = match image {
        DynamicImage::ImageRgb8(image) => Pixels::Rgb(image),
        DynamicImage::ImageRgba8(image) => Pixels::Rgba(image),
        other if other.color().has_alpha() => Pixels::Rgba(other.to_rgba8()),
        other => Pixels::Rgb(other.to_rgb8()),
    };
    Ok((pixels, orientation))
}

/// A PNG without its compressed metadata chunks (an ICC profile, compressed text), which
/// the decoder would inflate whole, outside the decoding limits: a few hundred
/// kilobytes of `iCCP` inflate to a gibibyte. Only pixels are kept of a photo anyway.
/// Every other chunk is passed on as it is; a file whose chunks cannot be walked is
/// left for the decoder to refuse.
fn png_without_compressed_metadata(bytes: &[u8]) -> Cow<'_, [u8]> {
    const SIGNATURE: usize = 8;
    const DROPPED: [&[u8; 4]; 3] = [b"iCCP", b"zTXt", b"iTXt"];
    let chunk_at = |at: usize| {
        let length = u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let kind: &[u8; 4] = bytes.get(at + 4..at + 8)?.try_into().ok()?;
        let end = at.checked_add(12)?.checked_add(length)?;
        (end <= bytes.len()).then_some((kind, end))
    };
    let mut kept = bytes.get(..SIGNATURE).map(<[u8]>::to_vec).unwrap_or_default();
    let mut at = SIGNATURE;
    let mut dropped = false;
    while let Some((kind, end)) = chunk_at(at) {
        if DROPPED.contains(&kind) {
            dropped = true;
        } else {
            kept.extend_from_slice(&bytes[at..end]);
        }
        at = end;
        if kind == b"IEND" {
            break;
        }
    }
    if !dropped {
        return Cow::Borrowed(bytes);
    }
    kept.extend_from_slice(&bytes[at..]);
    Cow::Owned(kept)
}

/// Whether a JPEG reaches its end-of-image marker. `image` decodes JPEGs leniently and
/// fills a cut-off picture's missing part with grey, so a truncated upload would be
/// stored as a photo. Walks the file's segments from the start (an EXIF thumbnail is
/// inside one) and each scan's data up to the marker after it (the data's 0xFF bytes
/// are stuffed or restart markers), so whatever follows the end (a phone's motion-photo
/// video) is never read.
fn jpeg_is_whole(bytes: &[u8]) -> bool {
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return false;
    }
    let mut at = 2;
    while let Some(&[0xFF, marker]) = bytes.get(at..at + 2) {
        match marker {
            0xD9 => return true,
            // Fill bytes before a marker, and markers without a length.
            0xFF => at += 1,
            0x01 | 0xD0..=0xD7 => at += 2,
            _ => {
                let Some(&[high, low]) = bytes.get(at + 2..at + 4) else { return false };
                at += 2 + usize::from(u16::from_be_bytes([high, low]));
                if marker == 0xDA {
                    // The scan's data, to the next marker.
                    loop {
                        match bytes.get(at..at + 2) {
                            None => return false,
                            Some(&[0xFF, 0x00 | 0xD0..=0xD7]) => at += 2,
                            Some(&[0xFF, _]) => break,
                            Some(_) => at += 1,
                        }
                    }
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod whole_jpeg_tests {
    use super::jpeg_is_whole;

    /// A JPEG as the segments go: start, an APP1 holding a whole thumbnail (its own
    /// markers), a scan whose data holds stuffed and restart bytes, the end.
    fn jpeg() -> Vec<u8> {
        let thumbnail = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x11, 0xFF, 0xD9];
        let mut app1 = vec![0xFF, 0xE1];
        app1.extend_from_slice(&u16::try_from(thumbnail.len() + 2).unwrap().to_be_bytes());
        app1.extend_from_slice(&thumbnail);
        let mut bytes = vec![0xFF, 0xD8];
        bytes.extend_from_slice(&app1);
        bytes.extend_from_slice(&[0xFF, 0xDA, 0x00, 0x03, 0x01, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD3, 0x56]);
        bytes.extend_from_slice(&[0xFF, 0xD9]);
        bytes
    }

    #[test]
    fn a_jpeg_is_whole_when_its_segments_reach_the_end_marker() {
        let whole = jpeg();
        assert!(jpeg_is_whole(&whole));
        // A video appended after the end (a motion photo) holding marker-like bytes.
        let mut motion = whole.clone();
        motion.extend_from_slice(&[0x00, 0xFF, 0xDA, 0x00, 0x04, 0xFF, 0xD8, 0x99]);
        assert!(jpeg_is_whole(&motion));
        // Cut anywhere before its end marker, including right after the thumbnail's.
        for cut in 2..whole.len() - 1 {
            assert!(!jpeg_is_whole(&whole[..cut]), "cut at {cut}");
        }
        assert!(!jpeg_is_whole(b"not a jpeg"));
    }
}

fn decoding_failed(err: image::ImageError) -> AppError {
    match err {
        image::ImageError::Limits(_) => invalid(format!(
            "the image is too large to decode (at most {MAX_SIDE} pixels a side, {} megapixels, {} MB decoded)",
            MAX_PIXELS / 1_000_000,
            MAX_DECODED_BYTES / 1_000_000
        )),
        image::ImageError::Unsupported(unsupported) => invalid(format!("the image cannot be read: {unsupported}")),
        // The decoder's own words say where the file is broken; they name no path.
        other => invalid(format!("the image is damaged or incomplete: {other}")),
    }
}

/// The middle of `image` within the shape (at most [`MAX_ASPECT`] times as tall as wide,
/// or as wide as tall), at most `bound` (width, height), its aspect kept, never
/// enlarged. Read through a view: the large picture is not copied.
fn reduce<P>(image: &ImageBuffer<P, Vec<u8>>, bound: (u32, u32)) -> ImageBuffer<P, Vec<u8>>
where
    P: image::Pixel<Subpixel = u8> + 'static,
{
    let (width, height) = image.dimensions();
    let (kept_w, kept_h) = (width.min(height * MAX_ASPECT), height.min(width * MAX_ASPECT));
    let view = imageops::crop_imm(image, (width - kept_w) / 2, (height - kept_h) / 2, kept_w, kept_h);
    // The size within the bound, the aspect of what is kept.
    let scale = f64::min(1.0, f64::min(f64::from(bound.0) / f64::from(kept_w), f64::from(bound.1) / f64::from(kept_h)));
    let to = |side: u32| ((f64::from(side) * scale).round() as u32).max(1);
    let (to_w, to_h) = (to(kept_w), to(kept_h));
    if (to_w, to_h) == (kept_w, kept_h) {
        return view.to_image();
    }
    // A large reduction first by averaging blocks of pixels (fast, and no aliasing at
    // that ratio), the last factor of two by a triangle filter.
    if kept_w > 2 * to_w {
        let coarse = imageops::thumbnail(&*view, 2 * to_w, 2 * to_h);
        return imageops::resize(&coarse, to_w, to_h, FilterType::Triangle);
    }
    imageops::resize(&*view, to_w, to_h, FilterType::Triangle)
}

fn webp(image: &DynamicImage) -> AppResult<Vec<u8>> {
    let (width, height) = (image.width(), image.height());
    let encoded = if image.color().has_alpha() {
        let rgba = image.to_rgba8();
        webp::Encoder::from_rgba(rgba.as_raw(), width, height).encode_simple(false, QUALITY)
    } else {
        let rgb = image.to_rgb8();
        webp::Encoder::from_rgb(rgb.as_raw(), width, height).encode_simple(false, QUALITY)
    };
    encoded.map(|memory| memory.to_vec()).map_err(|err| AppError::internal("encoding a photo", format!("{err:?}")))
}

/// `PUT /pets/{petId}/photo`: the pet's photo becomes the image in `bytes` (sent as
/// `content_type`); answers the pet as it is then.
pub async fn set(db: &Db, pet_id: i64, content_type: Option<&str>, bytes: axum::body::Bytes) -> AppResult<Pet> {
    let format = Format::of_upload(content_type, &bytes)?;
    // Refused before the work when the pet is gone.
    crate::services::pets::card(db, pet_id).await?;
    // The turn is held by the work itself: a request given up meanwhile (a timeout, a
    // client gone) cannot let another start while this one still runs.
    let turn = DECODING.clone().acquire_owned().await.map_err(|err| AppError::internal("photo queue", err))?;
    // On the blocking thread as this request's, so that a failure's line names it.
    let encoded = tokio::task::spawn_blocking(crate::request_id::carried_blocking(move || {
        let _turn = turn;
        encode(format, &bytes)
    }))
    .await
    .map_err(|err| AppError::internal("encoding a photo", err))??;
    store(db, pet_id, &encoded).await
}

/// Stores an encoded photo as the pet's, in one transaction; answers the pet.
pub async fn store(db: &Db, pet_id: i64, encoded: &Encoded) -> AppResult<Pet> {
    let mut tx = db.begin_write().await?;
    state_for_update(&mut tx, pet_id).await?;
    sql::photos::replace(&mut tx, pet_id, &encoded.hash, &encoded.variants).await?;
    let pet = Pet::from(sql::pets::card_in(&mut tx, pet_id).await?.ok_or_else(|| AppError::not_found("pet", pet_id))?);
    events::record(&mut tx, EventType::PetUpdated, &pet, Audience::Everyone).await?;
    tx.commit().await?;
    Ok(pet)
}

/// `DELETE /pets/{petId}/photo`: the pet has no photo from then on (whether it had one
/// or not; 404 only when the pet does not exist).
pub async fn remove(db: &Db, pet_id: i64) -> AppResult<()> {
    let mut tx = db.begin_write().await?;
    state_for_update(&mut tx, pet_id).await?;
    if sql::photos::remove(&mut tx, pet_id).await? {
        let pet = sql::pets::card_in(&mut tx, pet_id).await?.ok_or_else(|| AppError::not_found("pet", pet_id))?;
        events::record(&mut tx, EventType::PetUpdated, &Pet::from(pet), Audience::Everyone).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Whether a photo URL still names the pet's photo (a browser holding it is told so
/// without its bytes being read).
pub async fn still_there(db: &Db, pet_id: i64, hash: &str, width: u32) -> AppResult<bool> {
    Ok(PHOTO_WIDTHS.contains(&width) && sql::photos::exists(db, pet_id, hash, width).await?)
}

/// The WebP bytes a photo URL names, if the pet's photo is still that one.
pub async fn variant(db: &Db, pet_id: i64, hash: &str, width: u32) -> AppResult<Option<Vec<u8>>> {
    if !PHOTO_WIDTHS.contains(&width) {
        return Ok(None);
    }
    sql::photos::variant(db, pet_id, hash, width).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    /// `png` with a chunk of `kind` (any bytes, any checksum) after its header.
    fn with_chunk(png: &[u8], kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let header_end = 8 + 12 + 13;
        let mut out = png[..header_end].to_vec();
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&png[header_end..]);
        out
    }

    #[test]
    fn a_png_s_compressed_metadata_never_reaches_the_decoder() {
        let plain = png(40, 30);
        assert!(matches!(png_without_compressed_metadata(&plain), Cow::Borrowed(_)), "nothing to drop");
        for kind in [b"iCCP", b"zTXt", b"iTXt"] {
            let bomb = with_chunk(&plain, kind, &[0x78; 100]);
            assert_eq!(&png_without_compressed_metadata(&bomb)[..], &plain[..], "{}", String::from_utf8_lossy(kind));
        }
        // Other chunks stay as they are; a chunk that runs past the end is the
        // decoder's to refuse.
        let text = with_chunk(&plain, b"tEXt", b"Comment\0hello");
        assert_eq!(&png_without_compressed_metadata(&text)[..], &text[..]);
        let cut = &with_chunk(&plain, b"iCCP", &[1; 64])[..60];
        assert_eq!(&png_without_compressed_metadata(cut)[..], cut);
        assert!(encode(Format::Png, cut).is_err());
    }

    fn webp_size(bytes: &[u8]) -> (u32, u32) {
        let image = image::load_from_memory_with_format(bytes, ImageFormat::WebP).unwrap();
        (image.width(), image.height())
    }

    #[test]
    fn every_width_is_webp_of_the_same_picture_never_enlarged() {
        let encoded = encode(Format::Png, &png(2000, 1500)).unwrap();
        let sizes: Vec<_> = encoded.variants.iter().map(|(width, bytes)| (*width, webp_size(bytes))).collect();
        assert_eq!(sizes, [(320, (320, 240)), (640, (640, 480)), (1280, (1280, 960))]);
        let small = encode(Format::Png, &png(500, 300)).unwrap();
        let sizes: Vec<_> = small.variants.iter().map(|(_, bytes)| webp_size(bytes)).collect();
        assert_eq!(sizes, [(320, 192), (500, 300), (500, 300)]);
        assert_eq!(encoded.hash.len(), 16);
        assert_ne!(encoded.hash, small.hash);
        assert_eq!(
            encode(Format::Png, &png(2000, 1500)).unwrap().hash,
            encoded.hash,
            "the same content, the same hash"
        );
    }

    #[test]
    fn a_photo_is_cut_to_at_most_twice_as_tall_as_wide_or_wide_as_tall() {
        let sizes = |encoded: &Encoded| encoded.variants.iter().map(|(_, bytes)| webp_size(bytes)).collect::<Vec<_>>();
        assert_eq!(sizes(&encode(Format::Png, &png(400, 3000)).unwrap()), [(320, 640), (400, 800), (400, 800)]);
        assert_eq!(sizes(&encode(Format::Png, &png(3000, 400)).unwrap()), [(320, 160), (640, 320), (800, 400)]);
        assert_eq!(sizes(&encode(Format::Png, &png(1500, 4500)).unwrap()), [(320, 640), (640, 1280), (1280, 2560)]);
    }

    #[test]
    fn the_content_type_must_name_what_the_bytes_are() {
        let err = encode(Format::Jpeg, &png(10, 10)).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::InvalidImage, "the body is a PNG image, not JPEG as its Content-Type says")
        );
        let err = encode(Format::Png, b"hello, not an image").unwrap_err();
        assert_eq!(err.message, "the body is not a PNG image");
        let mut cut = png(300, 300);
        cut.truncate(cut.len() / 2);
        assert_eq!(encode(Format::Png, &cut).unwrap_err().code, ErrorCode::InvalidImage);
    }

    #[test]
    fn content_types_are_read_by_their_essence() {
        assert_eq!(Format::of_content_type("IMAGE/PNG; charset=binary"), Some(Format::Png));
        assert_eq!(Format::of_content_type("image/gif"), None);
        assert_eq!(Format::of_content_type("application/octet-stream"), None);
        // Sent as bytes, a file is known by its signature.
        let octets = Some("application/octet-stream");
        assert_eq!(Format::of_upload(octets, b"\xFF\xD8\xFF\xE0rest").unwrap(), Format::Jpeg);
        assert_eq!(Format::of_upload(octets, b"\x89PNG\r\n\x1a\nrest").unwrap(), Format::Png);
        assert_eq!(Format::of_upload(octets, b"RIFF\x10\0\0\0WEBPVP8 ").unwrap(), Format::Webp);
        assert_eq!(Format::of_upload(octets, b"GIF89a").unwrap_err().code, ErrorCode::InvalidImage);
        assert_eq!(Format::of_upload(Some("image/png"), b"GIF89a").unwrap(), Format::Png, "decoding tells");
        assert_eq!(Format::of_upload(None, b"\x89PNG").unwrap_err().code, ErrorCode::UnsupportedMediaType);
    }
}
