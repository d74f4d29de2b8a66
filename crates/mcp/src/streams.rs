//! The open streams of live changes, counted per connection and in all, so that no connection (and
//! no set of them) holds unbounded tasks. A stream holds a `Held` for its life.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Open streams one connection may hold.
pub const PER_CONNECTION: usize = 16;
/// Open streams in all.
pub const TOTAL: usize = 1024;

/// Counts open streams, so that no connection (and no set of them) holds unbounded tasks.
#[derive(Default)]
pub struct Streams {
    open: Mutex<HashMap<String, usize>>,
}

/// One open stream; closing it (dropping this) makes room for another.
pub struct Held {
    streams: Arc<Streams>,
    connection_id: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.streams.lock();
        if let Some(count) = open.get_mut(&self.connection_id) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.connection_id);
            }
        }
    }
}

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for one more stream of `connection_id`, or why there is none.
    pub fn open(self: &Arc<Self>, connection_id: &str) -> Result<Held, &'static str> {
        let mut open = self.lock();
        if open.values().sum::<usize>() >= TOTAL {
            return Err("the server has as many open streams as it holds; try again later");
        }
        let count = open.entry(connection_id.to_string()).or_default();
        if *count >= PER_CONNECTION {
            return Err("this connection has 16 open streams; close one before opening another");
        }
        *count += 1;
        Ok(Held {
            streams: Arc::clone(self),
            connection_id: connection_id.to_string(),
        })
    }

    /// How many streams are open now.
    pub fn len(&self) -> usize {
        self.lock().values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_bounded_per_connection_and_room_comes_back_on_close() {
        let streams = Arc::new(Streams::default());
        let held: Vec<Held> = (0..PER_CONNECTION).map(|_| streams.open("a").unwrap()).collect();
        assert!(streams.open("a").is_err());
        let other = streams.open("b").unwrap();
        assert_eq!(streams.len(), PER_CONNECTION + 1);
        drop(held);
        assert_eq!(streams.len(), 1);
        assert!(streams.open("a").is_ok());
        drop(other);
    }
}
