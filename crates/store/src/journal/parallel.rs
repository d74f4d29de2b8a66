//! An ordered parallel map for CPU-bound work over many inputs (reading and parsing files): a thread
//! per core, at most four, each taking the next input as it finishes one, so that one slow input does
//! not hold a whole share back. The answers come back in the inputs' order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most threads `map` starts: the work is bound by the CPU and by reading files.
const MAX_THREADS: usize = 4;

/// `work` applied to every input, on up to a thread per core; the answers in the inputs' order.
pub fn map<T: Sync, R: Send>(inputs: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
        .min(inputs.len());
    if threads <= 1 {
        return inputs.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let answers: Mutex<Vec<Option<R>>> = Mutex::new(inputs.iter().map(|_| None).collect());
    let run = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(input) = inputs.get(i) else { break };
            mine.push((i, work(input)));
        }
        // One lock per thread, not per input.
        let mut answers = answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (i, answer) in mine {
            answers[i] = Some(answer);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(run);
        }
        run();
    });
    answers
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .into_iter()
        // Every index below the inputs' length was taken by exactly one thread.
        .map(|answer| answer.expect("every input was mapped"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_in_the_inputs_order() {
        let inputs: Vec<u64> = (0..10_000).collect();
        let squares = map(&inputs, |n| {
            // Uneven work, so that threads finish out of order.
            if n % 7 == 0 {
                std::thread::yield_now();
            }
            n * n
        });
        assert_eq!(squares, inputs.iter().map(|n| n * n).collect::<Vec<_>>());
    }

    #[test]
    fn no_inputs_and_one_input_need_no_threads() {
        assert!(map(&[] as &[u8], |n| *n).is_empty());
        assert_eq!(map(&["a"], |s| s.len()), [1]);
    }
}
