//! Links as QR codes: an SVG drawn by the server (the client carries no QR encoder), black on
//! white with its quiet zone, for handing a link to someone in the room.

/// The SVG element for `url` (no XML declaration: it goes inside a page). Empty if the link
/// cannot be encoded (Ebb's links are far below a QR code's capacity).
pub fn svg(url: &str) -> String {
    match qrcode::QrCode::with_error_correction_level(url.as_bytes(), qrcode::EcLevel::M) {
        Ok(code) => {
            let svg = code.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).quiet_zone(true).build();
            match svg.find("<svg") {
                Some(start) => svg[start..].to_string(),
                None => String::new(),
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "a link could not be drawn as a QR code");
            String::new()
        }
    }
}
