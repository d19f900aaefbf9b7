//! Numbers as the app writes them, in integer fixed point: float
//! formatting code is large in the `.wasm`, so no `{:.1}` of an `f64`
//! reaches it.

/// `v` with one decimal, as `{:.1}` writes it but in integers (float
/// formatting code is large in the `.wasm`): coordinates, seconds, sizes.
/// Halves round away from zero.
pub fn one_decimal(v: f64) -> String {
    let tenths = (v * 10.0).round();
    let tenths = if tenths.is_finite() { tenths as i64 } else { 0 };
    let sign = if tenths < 0 { "-" } else { "" };
    let a = tenths.unsigned_abs();
    format!("{sign}{}.{}", a / 10, a % 10)
}

/// Milliseconds as seconds with one decimal (`1250` → `1.3`).
pub fn seconds(ms: u64) -> String {
    let tenths = (ms + 50) / 100;
    format!("{}.{}", tenths / 10, tenths % 10)
}
