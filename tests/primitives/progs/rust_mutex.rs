// rust_mutex — std::sync::Mutex contended on purpose: in each of 20 rounds
// main holds the lock until the other thread sleeps in the kernel (Rust's
// std Mutex is a futex word; its waits go through libc's syscall()). Then 5
// Condvar::notify_one with nobody waiting.
//
// Expected: one futex word (the Mutex's state, role "lock") with 20 waits
// that slept and 20 wake-ups with a latency; one (the Condvar's) with 5
// wakes that woke nobody.
use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

static ROUND: AtomicUsize = AtomicUsize::new(usize::MAX);

fn state(path: &str) -> Option<char> {
    let stat = fs::read_to_string(path).ok()?;
    let end = stat.rfind(')')?;
    stat[end + 1..].trim_start().chars().next()
}

// Returns once a thread other than main sleeps in the kernel.
fn wait_other_blocked() {
    let me = std::process::id().to_string();
    loop {
        if let Ok(dir) = fs::read_dir("/proc/self/task") {
            for e in dir.flatten() {
                let tid = e.file_name().into_string().unwrap_or_default();
                if tid != me && state(&format!("/proc/self/task/{}/stat", tid)) == Some('S') {
                    return;
                }
            }
        }
        thread::yield_now();
    }
}

fn main() {
    let m = Arc::new(Mutex::new(0u64));
    for round in 0..20 {
        let guard = m.lock().unwrap();
        let m2 = Arc::clone(&m);
        let t = thread::spawn(move || {
            ROUND.store(round, Ordering::SeqCst);
            let mut g = m2.lock().unwrap();
            *g += 1;
        });
        while ROUND.load(Ordering::SeqCst) != round {
            thread::yield_now();
        }
        wait_other_blocked();
        drop(guard);
        t.join().unwrap();
    }
    let cv = Condvar::new();
    for _ in 0..5 {
        cv.notify_one();
    }
    println!("count={}", *m.lock().unwrap());
}
