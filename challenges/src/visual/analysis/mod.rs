//! What an adversary holding this source computes from a `visual_match` prompt, with no trained
//! model: ink extraction written against the family's clutter (`ink`), and a template matcher
//! over the renderer's own glyph atlas with a spacing-aware search for the whole string
//! (`matcher`). [`solve`] is the family's baseline; the node's attackers call [`read`] and
//! feed [`cleaned`] to Tesseract.

mod ink;
mod matcher;

use image::GrayImage;

use super::VisualData;
use super::encode::decode_base64_png;
pub use ink::Ink;

/// Largest prompt payload read.
const MAX_DATA: usize = 1 << 20;

/// The prompt's image, decoded; `None` for anything that is not a `visual_match` prompt.
pub fn prompt_image(data: &[u8]) -> Option<GrayImage> {
    if data.len() > MAX_DATA {
        return None;
    }
    let data: VisualData = serde_json::from_slice(data).ok()?;
    decode_base64_png(data.images.first()?)
}

/// The image's ink with clutter lines and specks removed and its rotation undone, with the
/// text's vertical extent; `None` when there is hardly any ink.
pub fn cleaned(img: &GrayImage) -> Option<(Ink, f32, f32)> {
    ink::deskew(&ink::extract(img))
}

/// The template matcher's reading of an image, with its mean correlation per letter.
pub fn read(img: &GrayImage) -> Option<(String, f32)> {
    let (ink, top, bottom) = cleaned(img)?;
    matcher::read(&matcher::half(&ink), top, bottom)
}

/// PNG bytes decoded to grey pixels (any size); `None` if they are not a PNG.
pub fn decode_png(bytes: &[u8]) -> Option<GrayImage> {
    if bytes.len() > MAX_DATA {
        return None;
    }
    Some(image::load_from_memory(bytes).ok()?.to_luma8())
}

/// An image as PNG bytes (for OCR engines).
pub fn png(img: &GrayImage) -> Vec<u8> {
    super::encode::png(img)
}

/// `img` enlarged `k` times (nearest neighbour), as OCR engines prefer larger text.
pub fn enlarged(img: &GrayImage, k: u32) -> GrayImage {
    let k = k.max(1);
    GrayImage::from_fn(img.width() * k, img.height() * k, |x, y| {
        *img.get_pixel(x / k, y / k)
    })
}

/// The baseline's answer to a prompt's data.
pub fn solve(data: &[u8]) -> Option<Vec<u8>> {
    read(&prompt_image(data)?).map(|(text, _)| text.into_bytes())
}
