// rust_lock — one std::sync::Mutex wait from a function of the program's
// own (wait_for_it), for the analyzer's Rust names: demangled (v0 and
// legacy manglings), std frames skipped as runtime. The holder keeps the
// lock 200 ms after the waiter said it is about to take it, so the waiter
// blocks in the futex (the test retries on a machine too slow for that).
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

#[inline(never)]
fn hold_then_release(m: &Mutex<u64>, held: mpsc::Sender<()>, about_to_lock: mpsc::Receiver<()>) {
    let mut g = m.lock().unwrap();
    held.send(()).unwrap();
    about_to_lock.recv().unwrap();
    thread::sleep(Duration::from_millis(200));
    *g += 1;
}

#[inline(never)]
fn wait_for_it(m: &Mutex<u64>) {
    *m.lock().unwrap() += 1;
}

fn main() {
    let m = Arc::new(Mutex::new(0u64));
    let (held_tx, held_rx) = mpsc::channel();
    let (about_tx, about_rx) = mpsc::channel();
    let holder = {
        let m = m.clone();
        thread::spawn(move || hold_then_release(&m, held_tx, about_rx))
    };
    held_rx.recv().unwrap();
    about_tx.send(()).unwrap();
    wait_for_it(&m);
    holder.join().unwrap();
    println!("{}", *m.lock().unwrap());
}
