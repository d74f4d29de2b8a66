//! The wall clock, in the one unit the journal stores times in: whole seconds since the Unix epoch.
//! Lifetimes, expiries and audit times all read it here, so no feature imports another for the time.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch now (0 if the system clock is set before 1970).
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
