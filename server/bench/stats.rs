//! Latency statistics: percentiles over recorded samples.

/// Recorded latencies of one kind of request, in microseconds.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    micros: Vec<u32>,
    pub errors: u64,
    pub bytes: u64,
}

impl Samples {
    pub fn record(&mut self, micros: u128, bytes: usize) {
        self.micros.push(micros.min(u128::from(u32::MAX)) as u32);
        self.bytes += bytes as u64;
    }

    pub fn merge(&mut self, other: Samples) {
        self.micros.extend(other.micros);
        self.errors += other.errors;
        self.bytes += other.bytes;
    }

    pub fn count(&self) -> usize {
        self.micros.len()
    }

    /// The value at quantile `q` (0..=1), nearest rank; 0 when there are no samples.
    pub fn quantile(&mut self, q: f64) -> f64 {
        if self.micros.is_empty() {
            return 0.0;
        }
        self.micros.sort_unstable();
        let rank = ((q * self.micros.len() as f64).ceil() as usize).clamp(1, self.micros.len());
        f64::from(self.micros[rank - 1])
    }

    /// Mean response size in bytes.
    pub fn mean_bytes(&self) -> usize {
        if self.micros.is_empty() {
            0
        } else {
            (self.bytes / self.micros.len() as u64) as usize
        }
    }
}

/// User and system CPU time of a process, in seconds (Linux; USER_HZ is 100 on every mainstream kernel).
pub fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| format!("process {pid}: {e}"))?;
    let after_name = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or("an unexpected /proc stat line")?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    Ok((ticks(11) + ticks(12)) / 100.0)
}

/// A memory figure of a process from /proc (`VmRSS` now, `VmHWM` its peak), in MB.
pub fn rss_mb(pid: u32, field: &str) -> Result<f64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| format!("process {pid}: {e}"))?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    Ok(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let mut samples = Samples::default();
        for v in 1..=100 {
            samples.record(v, 10);
        }
        assert_eq!(samples.quantile(0.5), 50.0);
        assert_eq!(samples.quantile(0.99), 99.0);
        assert_eq!(samples.quantile(0.999), 100.0);
        assert_eq!(samples.quantile(0.0), 1.0);
        assert_eq!(samples.mean_bytes(), 10);
        assert_eq!(Samples::default().quantile(0.5), 0.0);
    }
}
