//! Pet content (contract.md, "Pet content"): description and price on both surfaces,
//! what orders record of the price, and photos: every bad image refused with its own
//! Error and nothing stored, and the stored widths served under `/media` without a key.

mod common;

use std::io::Cursor;

use app::model::{Plan, Role};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use common::{Reply, TestApp};
use image::{ImageEncoder, ImageFormat};
use serde_json::{Value, json};

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, 128]));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).unwrap();
    out.into_inner()
}

/// A valid JPEG of a gradient (no metadata).
fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, 128]));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

/// A valid WebP of a gradient (the `image` crate writes it lossless).
fn webp(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, 128]));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::WebP).unwrap();
    out.into_inner()
}

/// A JPEG whose EXIF says to turn it a quarter to the right to show it (as phones
/// write a photo taken upright), and names a place that must never reach a visitor.
fn jpeg_with_exif(width: u32, height: u32) -> Vec<u8> {
    let secret = b"SECRET PLACE 51.5N 0.1W\0";
    let mut exif = Vec::new();
    exif.extend_from_slice(b"MM\x00\x2a\x00\x00\x00\x08"); // big-endian TIFF, first IFD at 8
    exif.extend_from_slice(&2u16.to_be_bytes()); // two entries
    // Orientation (0x0112), SHORT, 1 value: 6 (turn 90° clockwise to show).
    exif.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1, 0x00, 0x06, 0, 0]);
    // ImageDescription (0x010E), ASCII, its text after the IFD.
    let text_at = 8 + 2 + 2 * 12 + 4;
    exif.extend_from_slice(&[0x01, 0x0e, 0x00, 0x02]);
    exif.extend_from_slice(&(secret.len() as u32).to_be_bytes());
    exif.extend_from_slice(&(text_at as u32).to_be_bytes());
    exif.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    exif.extend_from_slice(secret);
    let image = image::RgbImage::from_fn(width, height, |x, _| image::Rgb([(x % 256) as u8, 90, 40]));
    let mut out = Vec::new();
    let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90);
    encoder.set_exif_metadata(exif).unwrap();
    encoder.write_image(image.as_raw(), width, height, image::ExtendedColorType::Rgb8).unwrap();
    assert!(out.windows(12).any(|w| w == b"SECRET PLACE"), "the test JPEG carries its EXIF");
    out
}

/// A PNG that claims `width` × `height` pixels in a few dozen bytes (a decompression
/// bomb: decoding it would allocate width × height bytes).
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    png_header_only(width, height, 8, 0)
}

/// As [`png_claiming`], of `bit_depth` bits a channel and PNG colour type `colour`
/// (0 grey, 6 RGBA).
fn png_header_only(width: u32, height: u32, bit_depth: u8, colour: u8) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[bit_depth, colour, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn webp_size(bytes: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory_with_format(bytes, ImageFormat::WebP).expect("a WebP image");
    (image.width(), image.height())
}

async fn upload(app: &TestApp, pet: i64, content_type: Option<&str>, body: Vec<u8>) -> Reply {
    app.raw(Method::PUT, &format!("/api/v1/pets/{pet}/photo"), content_type, body).await
}

/// A GET of a photo URL as a browser sends it: no key.
async fn fetch(app: &TestApp, url: &str, if_none_match: Option<&str>) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let mut request = Request::get(url);
    if let Some(tag) = if_none_match {
        request = request.header(header::IF_NONE_MATCH, tag);
    }
    let reply = app.send(request.body(Body::empty()).unwrap()).await;
    (reply.status, reply.headers, reply.text.into_bytes())
}

/// The raw bytes of a photo (the reply's text is lossy).
async fn photo_bytes(app: &TestApp, url: &str) -> Vec<u8> {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut request = Request::get(url).body(Body::empty()).unwrap();
    request.extensions_mut().insert(axum::extract::ConnectInfo(std::net::SocketAddr::from(([127, 0, 0, 1], 40000))));
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{url}");
    response.into_body().collect().await.unwrap().to_bytes().to_vec()
}

fn urls(pet: &Value) -> Vec<String> {
    pet["photoUrls"].as_array().expect("photoUrls").iter().map(|url| url.as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_photo_is_stored_at_three_widths_and_served_without_a_key() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let rex = app.pet("Rex", dogs, None).await;
    assert_eq!(app.get(&format!("/api/v1/pets?ids={rex}")).await.body[0]["photoUrls"], json!([]));

    let reply = upload(&app, rex, Some("image/png"), png(2000, 1500)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let first = urls(&reply.body);
    assert_eq!(first.len(), 3);
    for (url, width) in first.iter().zip([320, 640, 1280]) {
        assert!(url.starts_with(&format!("/media/pets/{rex}/")) && url.ends_with(&format!("-{width}.webp")), "{url}");
    }
    // The pet as every read shows it.
    assert_eq!(urls(&app.get(&format!("/api/v1/pets?ids={rex}")).await.body[0]), first);

    // Each width, as WebP of that width, kept for a year under its ETag; a browser
    // holding it is told so without the bytes.
    for (url, size) in first.iter().zip([(320, 240), (640, 480), (1280, 960)]) {
        let (status, headers, _) = fetch(&app, url, None).await;
        assert_eq!(status, StatusCode::OK, "{url}");
        assert_eq!(headers["content-type"], "image/webp");
        assert_eq!(headers["cache-control"], "public, max-age=31536000, immutable");
        let etag = headers["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        assert!(headers.get("x-ratelimit-limit").is_none(), "not counted against a limit");
        assert_eq!(webp_size(&photo_bytes(&app, url).await), size);
        let (status, headers, body) = fetch(&app, url, Some(&etag)).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        assert_eq!(headers["etag"].to_str().unwrap(), etag);
        assert!(body.is_empty());
    }
    // No key and no rate limit: a visitor's catalog pages show many.
    for _ in 0..80 {
        assert_eq!(fetch(&app, &first[0], None).await.0, StatusCode::OK);
    }

    // A new photo has new URLs; the old ones are gone.
    let reply = upload(&app, rex, Some("image/png"), png(900, 900)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let second = urls(&reply.body);
    assert!(second.iter().all(|url| !first.contains(url)));
    assert_eq!(fetch(&app, &first[1], None).await.0, StatusCode::NOT_FOUND);
    let old_tag = format!("\"{}\"", first[1].rsplit('/').next().unwrap().trim_end_matches(".webp"));
    assert_eq!(fetch(&app, &first[1], Some(&old_tag)).await.0, StatusCode::NOT_FOUND, "held, but gone");
    assert_eq!(webp_size(&photo_bytes(&app, &second[2]).await), (900, 900), "never enlarged");
    assert_eq!(app.count("pet_photos").await, 3);

    // Removed: no URLs, and they answer 404; removing again is fine.
    let reply = app.delete(&format!("/api/v1/pets/{rex}/photo")).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{}", reply.text);
    assert_eq!(app.get(&format!("/api/v1/pets?ids={rex}")).await.body[0]["photoUrls"], json!([]));
    assert_eq!(fetch(&app, &second[0], None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(app.delete(&format!("/api/v1/pets/{rex}/photo")).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.count("pet_photos").await, 0);

    // Deleting the pet takes its photo along.
    upload(&app, rex, Some("image/png"), png(400, 300)).await;
    assert_eq!(app.delete(&format!("/api/v1/pets/{rex}")).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.count("pet_photos").await, 0);
    app.delete(&format!("/api/v1/pets/{rex}/photo")).await.assert_error(404, "not_found");
}

#[tokio::test]
async fn a_photo_is_turned_upright_and_keeps_nothing_but_its_pixels() {
    let app = TestApp::new().await;
    let pet = app.pet("Rex", app.category("Dogs").await, None).await;
    let reply = upload(&app, pet, Some("image/jpeg"), jpeg_with_exif(400, 300)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let upright = urls(&reply.body);
    // Stored upright: 300 wide and 400 tall.
    assert_eq!(webp_size(&photo_bytes(&app, &upright[2]).await), (300, 400));
    for url in &upright {
        let bytes = photo_bytes(&app, url).await;
        assert!(!bytes.windows(6).any(|w| w == b"SECRET"), "{url} carries no metadata");
        assert!(!bytes.windows(4).any(|w| w == b"EXIF" || w == b"Exif"), "{url} has no EXIF chunk");
    }
    // WebP uploads are re-encoded too.
    let mut webp = Cursor::new(Vec::new());
    image::RgbaImage::from_pixel(64, 48, image::Rgba([1, 2, 3, 128])).write_to(&mut webp, ImageFormat::WebP).unwrap();
    let reply = upload(&app, pet, Some("image/webp"), webp.into_inner()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(webp_size(&photo_bytes(&app, &urls(&reply.body)[0]).await), (64, 48));
}

/// Generated API clients send a file as `application/octet-stream`: each of the three
/// formats is known by its first bytes and stored as any upload is.
#[tokio::test]
async fn a_photo_sent_as_bytes_is_known_by_its_signature() {
    let app = TestApp::new().await;
    let pet = app.pet("Rex", app.category("Dogs").await, None).await;
    for (body, size) in [(png(80, 60), (80, 60)), (jpeg(90, 60), (90, 60)), (webp(70, 50), (70, 50))] {
        let reply = upload(&app, pet, Some("application/octet-stream"), body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        assert_eq!(webp_size(&photo_bytes(&app, &urls(&reply.body)[0]).await), size);
    }
}

#[tokio::test]
async fn every_bad_upload_gets_its_own_error_and_stores_nothing() {
    let app = TestApp::new().await;
    let pet = app.pet("Rex", app.category("Dogs").await, None).await;
    let mut truncated = png(300, 200);
    truncated.truncate(truncated.len() / 2);
    let mut truncated_jpeg = jpeg(300, 200);
    truncated_jpeg.truncate(truncated_jpeg.len() / 2);
    let mut truncated_webp = webp(300, 200);
    truncated_webp.truncate(truncated_webp.len() / 2);
    let cases: Vec<(Option<&str>, Vec<u8>, u16, &str, &str)> = vec![
        (Some("image/gif"), b"GIF89a".to_vec(), 415, "unsupported_media_type", "image/jpeg, image/png, image/webp or"),
        // As bytes (what generated clients send), the file's signature must be one of them.
        (Some("application/octet-stream"), b"GIF89a".to_vec(), 422, "invalid_image", "not a JPEG, PNG or WebP"),
        (Some("application/octet-stream"), Vec::new(), 422, "invalid_image", "not a JPEG, PNG or WebP"),
        (Some("application/json"), b"{}".to_vec(), 415, "unsupported_media_type", "application/json"),
        (None, png(10, 10), 415, "unsupported_media_type", "no Content-Type"),
        // The Content-Type lies about the bytes.
        (Some("image/jpeg"), png(10, 10), 422, "invalid_image", "a PNG image, not JPEG"),
        (Some("image/webp"), jpeg_with_exif(16, 16), 422, "invalid_image", "a JPEG image, not WebP"),
        // Not an image at all, or broken.
        (Some("image/png"), b"just some text".to_vec(), 422, "invalid_image", "not a PNG image"),
        (Some("image/png"), Vec::new(), 422, "invalid_image", "not a PNG image"),
        (Some("image/png"), truncated, 422, "invalid_image", "damaged"),
        (Some("image/jpeg"), truncated_jpeg, 422, "invalid_image", "damaged"),
        (Some("image/webp"), truncated_webp, 422, "invalid_image", "damaged"),
        // Decompression bombs: a few bytes claiming billions of pixels.
        (Some("image/png"), png_claiming(100_000, 100_000), 422, "invalid_image", "too large"),
        (Some("image/png"), png_claiming(30_000, 1), 422, "invalid_image", "too large"),
        (Some("image/png"), png_claiming(10_000, 6_000), 422, "invalid_image", "megapixels"),
        // Under 50 megapixels, but 16-bit RGBA: 392 MB decoded.
        (Some("image/png"), png_header_only(7_000, 7_000, 16, 6), 422, "invalid_image", "MB decoded"),
    ];
    for (content_type, body, status, code, says) in cases {
        let reply = upload(&app, pet, content_type, body).await;
        assert_eq!(reply.status.as_u16(), status, "{content_type:?} ({says:?}) → {}", reply.text);
        let message = reply.assert_error(status, code);
        assert!(message.contains(says), "{content_type:?} → {message:?} should say {says:?}");
    }
    // Over 5 MiB, with a length and without (streamed in chunks).
    let big = vec![0u8; 5 * 1024 * 1024 + 1];
    let message =
        upload(&app, pet, Some("image/png"), big.clone()).await.assert_error(413, "payload_too_large").to_owned();
    assert!(message.contains("5242880"), "{message}");
    let chunks = big.chunks(64 * 1024).map(|chunk| Ok::<_, std::io::Error>(chunk.to_vec())).collect::<Vec<_>>();
    let streamed = Body::from_stream(futures::stream::iter(chunks));
    let reply = app.raw(Method::PUT, &format!("/api/v1/pets/{pet}/photo"), Some("image/png"), streamed).await;
    reply.assert_error(413, "payload_too_large");
    // JSON bodies keep their own 64 KiB limit.
    let reply =
        app.raw(Method::PUT, &format!("/api/v1/pets/{pet}"), Some("application/json"), vec![b' '; 70_000]).await;
    reply.assert_error(413, "payload_too_large");

    // Who may, and which pet.
    upload(&app, 999_999, Some("image/png"), png(10, 10)).await.assert_error(404, "not_found");
    upload(&app, 0, Some("image/png"), png(10, 10)).await.assert_error(404, "not_found");
    let (_, customer) = app.key(Role::Customer, Plan::Pro, None).await;
    let request = |key: Option<&str>| {
        let mut builder = Request::put(format!("/api/v1/pets/{pet}/photo")).header(header::CONTENT_TYPE, "image/png");
        if let Some(key) = key {
            builder = builder.header("x-api-key", key);
        }
        builder.body(Body::from(png(10, 10))).unwrap()
    };
    app.send(request(Some(&customer))).await.assert_error(403, "forbidden");
    app.send(request(None)).await.assert_error(401, "missing_api_key");
    let reply = app.request_as(Some(&customer), Method::DELETE, &format!("/api/v1/pets/{pet}/photo"), None).await;
    reply.assert_error(403, "forbidden");

    assert_eq!(app.count("pet_photos").await, 0);
    assert_eq!(app.get(&format!("/api/v1/pets?ids={pet}")).await.body[0]["photoUrls"], json!([]));

    // Between axum's own 2 MB default and the 5 MiB limit: taken (a 3.3 MB PNG of noise).
    let mut seed = 7_u32;
    let noise = image::RgbImage::from_fn(1_100, 1_000, |_, _| {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let [a, b, c, _] = seed.to_be_bytes();
        image::Rgb([a, b, c])
    });
    let mut big = Cursor::new(Vec::new());
    noise.write_to(&mut big, ImageFormat::Png).unwrap();
    let big = big.into_inner();
    assert!(big.len() > 3_000_000, "{} bytes", big.len());
    let reply = upload(&app, pet, Some("image/png"), big).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let kept = urls(&reply.body);
    // A refusal leaves the photo there was as it was.
    upload(&app, pet, Some("image/png"), b"not a picture".to_vec()).await.assert_error(422, "invalid_image");
    assert_eq!(urls(&app.get(&format!("/api/v1/pets?ids={pet}")).await.body[0]), kept);
    assert_eq!(app.count("pet_photos").await, 3);
    assert_eq!(fetch(&app, &kept[0], None).await.0, StatusCode::OK);

    // Paths that name no photo.
    for url in [
        format!("/media/pets/{pet}/0123456789abcdef-640.webp"),
        format!("/media/pets/{pet}/nothing"),
        "/media/pets/x/0123456789abcdef-640.webp".to_owned(),
    ] {
        assert_eq!(fetch(&app, &url, None).await.0, StatusCode::NOT_FOUND, "{url}");
    }

    // Whole, the files cut above are taken: it is the cut that is refused.
    for (content_type, body) in [("image/jpeg", jpeg(300, 200)), ("image/webp", webp(300, 200))] {
        let reply = upload(&app, pet, Some(content_type), body).await;
        assert_eq!(reply.status, StatusCode::OK, "{content_type}: {}", reply.text);
    }
}

#[tokio::test]
async fn description_and_price_are_optional_kept_unless_replaced_and_checked() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let reply = app
        .post("/api/v1/pets", json!({ "name": "Rex", "categoryId": dogs, "description": "  A good dog.\n\nVery good. ", "price": 12_900 }))
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.body["id"].as_i64().unwrap();
    let expected = json!({
        "id": id, "name": "Rex", "categoryId": dogs, "status": "available",
        "description": "A good dog.\n\nVery good.", "price": 12_900, "photoUrls": []
    });
    assert_eq!(reply.body, expected);
    assert_eq!(app.get(&format!("/api/v1/pets/{id}")).await.body, expected);

    // An older client's replace (no description, no price) leaves them as they were.
    let reply = app.put(&format!("/api/v1/pets/{id}"), json!({ "name": "Rexy", "categoryId": dogs })).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        (reply.body["description"].clone(), reply.body["price"].clone()),
        (expected["description"].clone(), json!(12_900))
    );
    // null removes; an empty description removes it too.
    let reply = app
        .put(
            &format!("/api/v1/pets/{id}"),
            json!({ "name": "Rexy", "categoryId": dogs, "price": null, "description": "" }),
        )
        .await;
    assert_eq!(
        reply.body,
        json!({ "id": id, "name": "Rexy", "categoryId": dogs, "status": "available", "photoUrls": [] })
    );
    let reply = app
        .put(
            &format!("/api/v1/pets/{id}"),
            json!({ "name": "Rexy", "categoryId": dogs, "price": 0, "description": null }),
        )
        .await;
    assert_eq!(reply.body["price"], 0);
    assert!(reply.body.get("description").is_none());

    // Bad values are refused, naming the field, and change nothing.
    let long = "x".repeat(2_001);
    for (body, field) in [
        (json!({ "name": "Rexy", "categoryId": dogs, "price": -1 }), "price"),
        (json!({ "name": "Rexy", "categoryId": dogs, "price": 100_000_001 }), "price"),
        (json!({ "name": "Rexy", "categoryId": dogs, "price": 12.5 }), "price"),
        (json!({ "name": "Rexy", "categoryId": dogs, "price": "12" }), "price"),
        (json!({ "name": "Rexy", "categoryId": dogs, "description": long }), "description"),
        (json!({ "name": "Rexy", "categoryId": dogs, "description": "bad\u{0}byte" }), "description"),
        (json!({ "name": "Rexy", "categoryId": dogs, "description": 5 }), "description"),
        (json!({ "name": "Rexy", "categoryId": dogs, "photoUrls": [] }), "photoUrls"),
    ] {
        let reply = app.put(&format!("/api/v1/pets/{id}"), body.clone()).await;
        let message = reply.assert_error(422, "validation_failed");
        assert!(message.contains(field), "{body} → {message}");
        let reply = app.post("/api/v1/pets", body.clone()).await;
        assert!(reply.assert_error(422, "validation_failed").contains(field), "{body}");
    }
    assert_eq!(app.get(&format!("/api/v1/pets/{id}")).await.body["price"], 0);
    assert_eq!(app.count("pets").await, 1);
    // 2,000 characters, counted as characters: fine. So is the highest price.
    let reply = app
        .put(
            &format!("/api/v1/pets/{id}"),
            json!({ "name": "Rexy", "categoryId": dogs, "description": "é".repeat(2_000), "price": 100_000_000 }),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}

#[tokio::test]
async fn an_order_keeps_the_price_it_was_placed_at() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let priced =
        app.post("/api/v1/pets", json!({ "name": "Rex", "categoryId": dogs, "price": 1_250 })).await.body["id"]
            .as_i64()
            .unwrap();
    app.put(&format!("/api/v1/store/inventory/{priced}"), json!({ "quantity": 10 })).await;
    let free = app.pet("Max", dogs, None).await;
    let (_, customer) = app.key(Role::Customer, Plan::Pro, None).await;
    let order = |pet: i64, quantity: i64| {
        app.request_as(
            Some(&customer),
            Method::POST,
            "/api/v1/store/orders",
            Some(json!({ "petId": pet, "quantity": quantity })),
        )
    };
    let reply = order(priced, 3).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert_eq!((reply.body["unitPrice"].clone(), reply.body["total"].clone()), (json!(1_250), json!(3_750)));
    let order_id = reply.body["id"].as_i64().unwrap();

    // A later price change does not touch it.
    app.put(&format!("/api/v1/pets/{priced}"), json!({ "name": "Rex", "categoryId": dogs, "price": 2_000 })).await;
    let reply = app.request_as(Some(&customer), Method::GET, &format!("/api/v1/store/orders/{order_id}"), None).await;
    assert_eq!((reply.body["unitPrice"].clone(), reply.body["total"].clone()), (json!(1_250), json!(3_750)));
    let reply = order(priced, 1).await;
    assert_eq!((reply.body["unitPrice"].clone(), reply.body["total"].clone()), (json!(2_000), json!(2_000)));

    // A pet without a price: neither field.
    let reply = order(free, 1).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert!(reply.body.get("unitPrice").is_none() && reply.body.get("total").is_none(), "{}", reply.text);
}

#[tokio::test]
async fn the_console_saves_description_and_price_as_typed_and_removes_photos() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let (_, staff) = app.session(Role::Admin).await;
    let reply = app
        .call_fn(
            Some(&staff),
            "staff_save_pet",
            &format!("name=Rex&category_id={dogs}&description=A+good+dog.&price=12.5"),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let id = reply.body["id"].as_i64().unwrap();
    assert_eq!((reply.body["description"].clone(), reply.body["price"].clone()), (json!("A good dog."), json!(1_250)));
    for (typed, problem) in [("12.505", "at most 2 decimals"), ("-3", "amount of EUR"), ("twelve", "amount of EUR")] {
        let reply = app
            .call_fn(Some(&staff), "staff_save_pet", &format!("id={id}&name=Rex&category_id={dogs}&price={typed}"))
            .await;
        assert!(reply.assert_field_error("price").contains(problem), "{typed}: {}", reply.text);
    }
    // The form sends what the pet gets: empty fields remove them.
    let reply = app
        .call_fn(Some(&staff), "staff_save_pet", &format!("id={id}&name=Rex&category_id={dogs}&price=&description="))
        .await;
    assert!(reply.body.get("price").is_none() && reply.body.get("description").is_none(), "{}", reply.text);

    // The console uploads through the API with its session (same-origin), and removes
    // through its own function.
    let upload = Request::put(format!("/api/v1/pets/{id}/photo"))
        .header(header::CONTENT_TYPE, "image/png")
        .header(header::COOKIE, &staff)
        .header("sec-fetch-site", "same-origin")
        .body(Body::from(png(50, 40)))
        .unwrap();
    let reply = app.send(upload).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(app.count("pet_photos").await, 3);
    let (_, customer) = app.session(Role::Customer).await;
    app.call_fn(Some(&customer), "staff_remove_photo", &format!("id={id}")).await.assert_error(403, "forbidden");
    assert_eq!(app.count("pet_photos").await, 3);
    let reply = app.call_fn(Some(&staff), "staff_remove_photo", &format!("id={id}")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(app.count("pet_photos").await, 0);
}

#[tokio::test]
async fn the_catalog_sorts_by_name_price_and_newest_across_pages() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    for (name, price) in
        [("delta", Some(300)), ("Alpha", Some(500)), ("charlie", None), ("Bravo", Some(100)), ("echo", Some(300))]
    {
        let mut body = json!({ "name": name, "categoryId": dogs });
        if let Some(price) = price {
            body["price"] = json!(price);
        }
        assert_eq!(app.post("/api/v1/pets", body).await.status, StatusCode::CREATED);
    }
    let db = &app.db;
    let all = |sort| async move {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = app::services::pets::browse(db, &Default::default(), sort, 2, cursor.as_deref()).await.unwrap();
            names.extend(page.items.into_iter().map(|card| card.name));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return names,
            }
        }
    };
    use app::model::PetSort;
    assert_eq!(all(PetSort::Added).await, ["delta", "Alpha", "charlie", "Bravo", "echo"]);
    assert_eq!(all(PetSort::Newest).await, ["echo", "Bravo", "charlie", "Alpha", "delta"]);
    assert_eq!(all(PetSort::Name).await, ["Alpha", "Bravo", "charlie", "delta", "echo"]);
    assert_eq!(all(PetSort::Price).await, ["Bravo", "delta", "echo", "Alpha", "charlie"], "no price last");

    // With a name search (three characters or more: SQLite's search index; fewer: a
    // scan), each order holds across pages.
    for name in ["Charlie Brown", "charming", "Charlotte"] {
        app.post("/api/v1/pets", json!({ "name": name, "categoryId": dogs, "price": 200 })).await;
    }
    let searched = |sort, q: &'static str| async move {
        let filter = app::model::PetFilter { q: Some(q.to_owned()), ..Default::default() };
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = app::services::pets::browse(db, &filter, sort, 2, cursor.as_deref()).await.unwrap();
            names.extend(page.items.into_iter().map(|card| card.name));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return names,
            }
        }
    };
    for q in ["char", "ar"] {
        assert_eq!(searched(PetSort::Added, q).await, ["charlie", "Charlie Brown", "charming", "Charlotte"], "{q}");
        assert_eq!(searched(PetSort::Newest, q).await, ["Charlotte", "charming", "Charlie Brown", "charlie"], "{q}");
        assert_eq!(searched(PetSort::Name, q).await, ["charlie", "Charlie Brown", "Charlotte", "charming"], "{q}");
        assert_eq!(searched(PetSort::Price, q).await, ["Charlie Brown", "charming", "Charlotte", "charlie"], "{q}");
    }

    // The storefront's function: a bad sort, or a cursor of another order, is a 422.
    let reply = app.call_fn(None, "catalog", "sort=cheapest").await;
    reply.assert_field_error("sort");
    let page = app::services::pets::browse(db, &Default::default(), PetSort::Name, 2, None).await.unwrap();
    let form = format!("sort=price&cursor={}", page.next_cursor.unwrap());
    app.call_fn(None, "catalog", &form).await.assert_field_error("cursor");
    let reply = app.call_fn(None, "catalog", "sort=price").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["items"][0]["name"], "Bravo");
}

#[tokio::test]
async fn markup_in_a_description_or_a_name_stays_text_in_cards_pages_and_alt_text() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let name = r#""><img src=x onerror=alert(1)>"#;
    let reply = app
        .post(
            "/api/v1/pets",
            json!({ "name": name, "categoryId": dogs, "description": "<script>alert(2)</script>\n\n<b>bold</b>" }),
        )
        .await;
    let pet = reply.body["id"].as_i64().unwrap();
    assert_eq!(upload(&app, pet, Some("image/png"), png(40, 30)).await.status, StatusCode::OK);
    for path in ["/".to_owned(), format!("/pets/{pet}")] {
        let page = app.send(Request::get(path.as_str()).body(Body::empty()).unwrap()).await;
        assert_eq!(page.status, StatusCode::OK);
        for markup in ["<img src=x", "<script>alert(2)", "<b>bold"] {
            assert!(!page.text.contains(markup), "{path}: {markup} as markup");
        }
        assert!(
            page.text.contains(r#"alt="Photo of &quot;&gt;&lt;img src=x onerror=alert(1)&gt;""#),
            "{path}: the name as text in alt"
        );
    }
}

#[tokio::test]
async fn a_description_sent_by_a_plain_form_keeps_its_paragraphs() {
    let app = TestApp::new().await;
    let dogs = app.category("Dogs").await;
    let (_, staff) = app.session(Role::Admin).await;
    // A browser sends a textarea's line breaks as CR LF.
    let form = format!("name=Rex&category_id={dogs}&description=One.%0D%0A%0D%0ATwo.%0D%0Athree&price=");
    let reply = app.call_fn(Some(&staff), "staff_save_pet", &form).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["description"], "One.\n\nTwo.\nthree");
}
