// rust_inlined — threads share one std::sync::Mutex through tally(), a
// function of the program's own that the compiler inlines (as it inlines
// most small Rust functions) into the program's implementation of std's
// Extend trait, inlined into the thread's closure, inlined into std's
// thread start (__rust_begin_short_backtrace): in the machine code
// everything the thread does is inside std's function. The debug info has
// the inlined frames: the lock must be named after tally and the CPU time
// after mix, the program's innermost functions, and the Extend impl is the
// program's code although its trait is std's (issue 13). The work under
// the lock outlasts std's spin, so the other thread sleeps on the futex.
use std::sync::{Arc, Mutex};
use std::thread;

const TOTAL: u64 = 20_000;

#[inline(always)]
fn mix(mut x: u64, rounds: u32) -> u64 {
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

#[inline(always)]
fn tally(counts: &Mutex<[u64; 16]>, x: u64) {
    let mut c = counts.lock().unwrap();
    let slot = (x & 15) as usize;
    c[slot] = mix(c[slot] ^ x, 2000);
}

struct Tally(Mutex<[u64; 16]>);

impl Extend<u64> for &Tally {
    #[inline(always)]
    fn extend<I: IntoIterator<Item = u64>>(&mut self, values: I) {
        for x in values {
            tally(&self.0, x);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers: u64 = args
        .iter()
        .position(|a| a == "--workers")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let counts = Arc::new(Tally(Mutex::new([0u64; 16])));
    let handles: Vec<_> = (0..workers)
        .map(|t| {
            let c = counts.clone();
            thread::spawn(move || {
                let mut sink = &*c;
                sink.extend((0..TOTAL / workers).map(|i| mix(i * 31 + t, 2000)));
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    println!("checksum {}", counts.0.lock().unwrap().iter().fold(0, |a, b| a ^ b));
}
