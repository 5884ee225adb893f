//! The crash points tests set through the environment (`HARVEST_CRASH_…`): the
//! process is killed there as `kill -9` from outside would.

/// SIGKILL to this process.
#[allow(unsafe_code)]
pub(crate) fn kill_this_process() {
    // SAFETY: raise(3) with a valid signal number; SIGKILL ends the process
    // here, as `kill -9` from outside would.
    unsafe {
        libc::raise(libc::SIGKILL);
    }
}
