//! Upkeep work that must not slow requests: the walks and comparisons of the periodic syncs run on
//! a thread of their own whose scheduling priority is lowered, so that on a busy machine they take
//! the cores' spare time instead of a share of every request's.
//!
//! A full scan of a 100,000-note vault is about half a second of one core. At normal priority it
//! competes with the threads answering agents and shows in their slowest answers; at a lowered one
//! it yields to them and still runs at full speed on an idle machine. Only work that holds no lock
//! a request could wait on belongs here (the index writer and the catalog's transactions stay on
//! the normal pool), so a starved scan delays nothing but itself. An import's indexing thread
//! (`preindex`) lowers itself too although it holds the index writer: a sync that finds the writer
//! taken leaves its work for later rather than waiting, so only the import itself waits on it.

use super::JournalError;

/// The nice value of the upkeep threads: well below requests (about a tenth of a normal thread's
/// share when both want a core), yet never starved outright.
const UPKEEP_NICE: i32 = 10;

/// Runs `work` on a fresh thread of lowered priority and waits for its result.
pub async fn run<T, F>(what: &str, work: F) -> Result<T, JournalError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("journal-upkeep".into())
        .spawn(move || {
            lower_priority();
            let _ = sender.send(work());
        })
        .map_err(|e| JournalError::Invalid(format!("could not start the {what} thread: {e}")))?;
    // A closed channel means the work panicked: its thread ended without an answer.
    receiver
        .await
        .map_err(|_| JournalError::Invalid(format!("the {what} task failed")))
}

/// Lowers the calling thread's priority (and that of the threads it starts later), relative to what
/// it inherited (a nice value is absolute, and a server already started with `nice` must not get a
/// *higher* one here). On Linux a nice value belongs to one thread (the call names the process, but
/// the kernel applies it to the caller alone); elsewhere it would lower the whole process, so
/// nothing changes there. A refusal is harmless: the work runs at normal priority.
pub(super) fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        let lowered = getpriority_process(None).and_then(|now| setpriority_process(None, lowered_nice(now)));
        if let Err(error) = lowered {
            tracing::debug!(%error, "could not lower the upkeep thread's priority");
        }
    }
}

/// The nice value for upkeep, given the thread's current one (19 is the lowest priority there is).
fn lowered_nice(now: i32) -> i32 {
    (now + UPKEEP_NICE).min(19).max(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_work_result() {
        let value = run("test", || 6 * 7).await.unwrap();
        assert_eq!(value, 42);
    }

    #[tokio::test]
    async fn a_panic_is_an_error_not_a_hang() {
        let result: Result<(), _> = run("test", || panic!("boom")).await;
        let error = result.unwrap_err().to_string();
        assert!(error.contains("the test task failed"), "{error}");
    }

    #[test]
    fn the_lowered_nice_value_is_relative_and_bounded() {
        assert_eq!(lowered_nice(0), 10);
        assert_eq!(lowered_nice(5), 15);
        assert_eq!(lowered_nice(15), 19);
        assert_eq!(lowered_nice(19), 19);
        assert_eq!(lowered_nice(-5), 5);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_work_runs_at_lowered_priority_and_the_caller_keeps_its_own() {
        let before = rustix::process::getpriority_process(None).unwrap();
        let inside = run("test", || rustix::process::getpriority_process(None).unwrap())
            .await
            .unwrap();
        assert_eq!(inside, lowered_nice(before));
        assert!(inside > before || before >= 19, "inside {inside}, before {before}");
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
    }
}
