// rust_mutex — threads share one std::sync::Mutex<u64> and increment it
// 4,000,000 times in all. Rust's mutex spins in user space before it calls
// futex, so at 2 threads most of the extra CPU is spent inside
// std's Mutex::lock_contended: the CPU samples must charge it to the mutex
// (its futex word), not to a cache line no lock explains (issue 12).
use std::sync::{Arc, Mutex};
use std::thread;

const TOTAL: u64 = 4_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers: u64 = args
        .iter()
        .position(|a| a == "--workers")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let counter = Arc::new(Mutex::new(0u64));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let c = counter.clone();
            thread::spawn(move || {
                for _ in 0..TOTAL / workers {
                    *c.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    println!("counter {}", *counter.lock().unwrap());
}
