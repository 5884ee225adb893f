//! Bounded decoding of an encoded image (format guessed from its bytes): a hostile file
//! from a crawl fails instead of exhausting memory. Apart from the hashes because the
//! limits are about the input, not about what is computed from it.

use std::io::Cursor;

use image::{DynamicImage, ImageReader, Limits};

use crate::error::{Error, Result};

/// Largest image decoded (width x height): 40 megapixels.
pub const MAX_PIXELS: u64 = 40_000_000;

/// Most memory the decoder may allocate for one image.
pub const MAX_DECODE_BYTES: u64 = 256 * 1024 * 1024;

/// Largest side accepted by the decoder.
pub const MAX_SIDE: u32 = 20_000;

/// Decodes an image whose format is guessed from its first bytes, within the limits of the
/// module docs.
pub fn decode(bytes: &[u8]) -> Result<DynamicImage> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Error::Image(e.to_string()))?;
    if reader.format().is_none() {
        return Err(Error::Image("unknown image format".into()));
    }
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    reader.limits(limits);
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| Error::Image(e.to_string()))?;
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(Error::Image(format!("{w}x{h} is over {MAX_PIXELS} pixels")));
    }
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Error::Image(e.to_string()))?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    reader.decode().map_err(|e| Error::Image(e.to_string()))
}
