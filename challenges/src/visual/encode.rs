//! PNG in and out, and base64 for the JSON prompt.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::codecs::png::{CompressionType, FilterType, PngDecoder, PngEncoder};
use image::{ExtendedColorType, GrayImage, ImageDecoder, ImageEncoder};

use super::geometry::{HEIGHT, WIDTH};

/// Largest base64 image an analysis decodes (a prompt image is a few kilobytes).
const MAX_IMAGE_B64: usize = 256 * 1024;

/// Encodes a grey image as an 8-bit greyscale PNG, fast compression, `Sub` filter.
pub(crate) fn png(img: &GrayImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(6 * 1024);
    let encoder = PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Sub);
    // Writing a well-formed buffer into memory has no failure mode; an error would leave the
    // image empty, which the prompt tests would catch.
    if encoder
        .write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            ExtendedColorType::L8,
        )
        .is_err()
    {
        out.clear();
    }
    out
}

/// The PNG as standard base64, the form carried in prompt JSON.
pub(crate) fn png_base64(img: &GrayImage) -> String {
    STANDARD.encode(png(img))
}

/// Decodes a base64 PNG of the prompt's size into grey pixels; `None` for anything else.
pub fn decode_base64_png(b64: &str) -> Option<GrayImage> {
    if b64.len() > MAX_IMAGE_B64 {
        return None;
    }
    let bytes = STANDARD.decode(b64).ok()?;
    let decoder = PngDecoder::new(std::io::Cursor::new(bytes)).ok()?;
    if decoder.dimensions() != (WIDTH, HEIGHT) || decoder.color_type() != image::ColorType::L8 {
        return None;
    }
    let mut buf = vec![0u8; (WIDTH * HEIGHT) as usize];
    decoder.read_image(&mut buf).ok()?;
    GrayImage::from_raw(WIDTH, HEIGHT, buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;
    use crate::visual::geometry::Strength;
    use crate::visual::render::distorted;

    #[test]
    fn png_round_trips_and_is_small() {
        let img = distorted("ACDEF", &Strength::of(5), &mut Seed([1; 32]).stream());
        let b64 = png_base64(&img);
        assert!(b64.len() < 16 * 1024, "{} bytes", b64.len());
        let back = decode_base64_png(&b64).unwrap();
        assert_eq!(back, img);
        assert!(decode_base64_png("not base64!").is_none());
        assert!(decode_base64_png(&STANDARD.encode(b"\x89PNG garbage")).is_none());
        assert!(decode_base64_png(&"A".repeat(MAX_IMAGE_B64 + 4)).is_none());
    }
}
