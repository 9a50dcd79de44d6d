//! Draws the demo catalog's pictures: each pet's template (`app/demo/<kind>.svg`) with
//! its colours, 1280 × 960, through the store's own photo pipeline (the one an upload
//! takes), written as `app/demo/photos/<pet>-<width>.webp` for the demo catalog to
//! include. Run by `make demo-photos` after changing a template or a pet's colours.

use std::path::Path;

use app::services::demo;
use app::services::photos::{self, Format};
use resvg::{tiny_skia, usvg};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    let out = root.join("photos");
    std::fs::create_dir_all(&out).expect("app/demo/photos can be made");
    let mut total = 0;
    for (slug, picture) in demo::pictures() {
        let template = std::fs::read_to_string(root.join(format!("{}.svg", picture.kind)))
            .unwrap_or_else(|err| panic!("app/demo/{}.svg: {err}", picture.kind));
        let svg =
            picture.colours.iter().fold(template, |svg, (name, colour)| svg.replace(&format!("{{{name}}}"), colour));
        assert!(!svg.contains("{"), "{slug}: a colour of {}.svg has no value: {svg}", picture.kind);
        let tree = usvg::Tree::from_str(&svg, &usvg::Options::default()).expect("the template is SVG");
        let size = tree.size().to_int_size();
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).expect("a canvas");
        resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
        let png = pixmap.encode_png().expect("the picture encodes as PNG");
        let encoded = photos::encode(Format::Png, &png).expect("the store takes the picture");
        for (width, bytes) in &encoded.variants {
            std::fs::write(out.join(format!("{slug}-{width}.webp")), bytes).expect("the picture is written");
            total += bytes.len();
        }
        println!(
            "{slug}: {}",
            encoded.variants.iter().map(|(w, b)| format!("{w}w {} B", b.len())).collect::<Vec<_>>().join(", ")
        );
    }
    println!("{total} bytes in all");
}
