//! PNG in and out, base64 for the JSON prompt, and the label list.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::codecs::png::{CompressionType, FilterType, PngDecoder, PngEncoder};
use image::{ExtendedColorType, GrayImage, ImageDecoder, ImageEncoder};

use super::geometry::{HEIGHT, WIDTH};
use super::render::clean;
use crate::vocab::vocabulary;

/// Largest base64 image the baseline decodes (a prompt image is a few kilobytes).
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
pub(crate) fn decode_base64_png(b64: &str) -> Option<GrayImage> {
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

/// The labels images show: the vocabulary's words of four to seven letters, in capitals.
pub(crate) fn labels() -> &'static [String] {
    static LABELS: OnceLock<Vec<String>> = OnceLock::new();
    LABELS.get_or_init(|| {
        let mut words: Vec<String> = vocabulary()
            .words()
            .map(|(_, w)| w.to_ascii_uppercase())
            .filter(|w| (4..=7).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_uppercase()))
            .collect();
        words.sort();
        words.dedup();
        words
    })
}

/// The clean reference image of label `index` as base64 PNG. The MATCHA reference images carry
/// no randomness, so all of them are rendered once, on first use (a few tens of milliseconds).
pub(crate) fn clean_base64(index: usize) -> &'static str {
    static CACHE: OnceLock<Vec<String>> = OnceLock::new();
    CACHE
        .get_or_init(|| labels().iter().map(|l| png_base64(&clean(l))).collect())
        .get(index)
        .map_or("", String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trips_and_is_small() {
        let img = clean("FALCON");
        let b64 = png_base64(&img);
        assert!(b64.len() < 8 * 1024, "{} bytes", b64.len());
        let back = decode_base64_png(&b64).unwrap();
        assert_eq!(back, img);
        assert!(decode_base64_png("not base64!").is_none());
        assert!(decode_base64_png(&STANDARD.encode(b"\x89PNG garbage")).is_none());
        assert!(decode_base64_png(&"A".repeat(MAX_IMAGE_B64 + 4)).is_none());
    }

    #[test]
    fn labels_are_distinct_capitals_of_four_to_seven_letters() {
        let l = labels();
        assert!(l.len() > 300, "{}", l.len());
        assert!(l.windows(2).all(|w| w[0] < w[1]));
        for len in 4..=7 {
            assert!(l.iter().filter(|w| w.len() == len).count() >= 40, "{len}");
        }
        assert_eq!(clean_base64(0), clean_base64(0));
        assert_eq!(clean_base64(usize::MAX), "");
    }
}
