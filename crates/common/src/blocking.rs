//! Tells the thread pool a thread belongs to that the thread is about to block.
//!
//! The server runs statements on a few runner threads that take whichever
//! connection has a command ready (`tarn_server::runners`). A runner that sleeps
//! in a row-lock wait, a commit's flush wait or `SLEEP()` would leave the commands
//! of other connections waiting behind it, possibly for the very statement that
//! would release its lock. So the layers that put a thread to sleep for an unknown
//! time call [`about_to_block`] first, and a runner's hook makes sure another
//! thread is watching for ready connections. Threads without a hook (tests, the
//! `tarn sql` shell, pool workers) pay one thread-local read.
//!
//! Invariant: a hook never blocks and never calls [`about_to_block`] itself.

use std::cell::RefCell;

thread_local! {
    static HOOK: RefCell<Option<Box<dyn Fn()>>> = const { RefCell::new(None) };
}

/// Installs `hook` for the calling thread (or removes it, with `None`).
pub fn set_hook(hook: Option<Box<dyn Fn()>>) {
    HOOK.with(|h| *h.borrow_mut() = hook);
}

/// Called by a thread before it sleeps for longer than a page read could take.
pub fn about_to_block() {
    HOOK.with(|h| {
        if let Ok(hook) = h.try_borrow()
            && let Some(hook) = hook.as_ref()
        {
            hook();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn the_hook_runs_on_its_own_thread_only() {
        let calls = Rc::new(Cell::new(0));
        let seen = calls.clone();
        set_hook(Some(Box::new(move || seen.set(seen.get() + 1))));
        about_to_block();
        about_to_block();
        std::thread::spawn(about_to_block)
            .join()
            .expect("no hook there");
        assert_eq!(calls.get(), 2);
        set_hook(None);
        about_to_block();
        assert_eq!(calls.get(), 2);
    }
}
