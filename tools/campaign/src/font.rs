//! The one TrueType font of the pictures (matrix.png, waits.png), read at run
//! time: no system library; without a font the pictures have no labels.

use plotters::style::FontStyle;

/// Fonts tried in order (Debian's fonts-dejavu-core first); `CAMPAIGN_FONT` wins.
const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// Registers a font once; false when none could be read.
pub fn load_font() -> bool {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DONE.get_or_init(|| {
        let env = std::env::var("CAMPAIGN_FONT").ok();
        env.iter().map(String::as_str).chain(FONTS.iter().copied()).any(|p| {
            let Ok(bytes) = std::fs::read(p) else { return false };
            // Registered for the life of the process: the font lives as long.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
        })
    })
}
