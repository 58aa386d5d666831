//! Running the compiled program as a child process that never outlives `strata`.
//!
//! The child gets its own process group, so a signal meant for `strata` does not reach it by
//! accident and `strata` can kill the whole group (the program and anything it started) at
//! once. Three ways it could otherwise be left running, and what covers each:
//! * `strata` is interrupted or terminated (SIGINT, SIGTERM, SIGHUP): the CLI's signal handler
//!   calls [`kill_all`] before exiting;
//! * `strata` is killed outright (SIGKILL, which cannot be handled): the child asked the kernel
//!   for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`, Linux);
//! * the program runs past `--time-limit`: a watchdog thread kills the group.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::Mutex;

/// Process groups of the children that are running now.
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Starts `cmd` in a new process group that dies with this process, and registers it.
pub(crate) fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the forked child before exec and only calls async-signal-safe
    // functions (prctl, getppid).
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The parent may have died between fork and prctl.
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    RUNNING.lock().unwrap_or_else(|e| e.into_inner()).push(child.id() as i32);
    Ok(child)
}

/// Forgets a child that has been waited for.
pub(crate) fn finished(pid: u32) {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != pid as i32);
}

/// Kills the process group of `pid`.
pub(crate) fn kill_group(pid: u32) {
    // SAFETY: kill has no memory-safety preconditions; a group that is gone gives ESRCH.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// Kills every running child's process group (called when `strata` itself is stopped).
pub fn kill_all() {
    let groups = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for g in groups {
        kill_group(g as u32);
    }
}

/// The conventional name of a signal, for messages.
pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        _ => "a signal",
    }
}

/// Signals that come from outside the program (a user, a job controller, the OOM killer) rather
/// than from a fault in its own code.
pub(crate) fn is_external(sig: i32) -> bool {
    matches!(sig, libc::SIGHUP | libc::SIGINT | libc::SIGQUIT | libc::SIGKILL | libc::SIGTERM | libc::SIGXCPU)
        || sig == libc::SIGUSR1
        || sig == libc::SIGUSR2
        || sig == libc::SIGALRM
}
