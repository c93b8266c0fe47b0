//! A sandbox worker process on its own, for the sandbox crate's tests; the server runs the same
//! code as `toolhost sandbox-worker`.

fn main() -> std::process::ExitCode {
    sandbox::run_worker()
}
