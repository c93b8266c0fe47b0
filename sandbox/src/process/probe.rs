//! Test builds only (feature `wall-probe`): native code run inside a worker, standing for an
//! engine a handler has compromised, to prove what the worker's confinement refuses
//! (`sandbox/tests/wall.rs`). Never part of the server.

use std::io::{IoSliceMut, Read};
use std::net::{TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;

use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::child::RemoteHost;
use crate::{EndpointCode, HostOp};

/// What to attempt.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Probe {
    /// Every escape a compromised engine would try: files (the system's, the server's data
    /// dir, the server's memory and environment), sockets, new processes, tracing the server.
    /// Each attempt runs on a thread started after the worker confined itself.
    Escape {
        /// Stands for the server's data directory.
        data_dir: String,
        /// The server's process id.
        server_pid: u32,
    },
    /// A `kv.get` the worker forges for any endpoint, bypassing its own ops' checks: the server
    /// must check it as if the worker had not.
    ForgeKvGet {
        /// The call named ([`crate::NO_CALL`]: as a module's top level does while it loads).
        call: u64,
        /// The endpoint named in the forged operation.
        slug: String,
        /// The version of its code named.
        version: String,
        /// The key.
        key: String,
    },
    /// A frame that is not JSON: the server must kill and replace the worker.
    BreakProtocol,
    /// `count` forged `kv.get`s of `key` at once for `slug`, none awaited before the next is
    /// sent: the server must refuse those beyond its cap of operations in progress.
    FloodKvGet {
        /// The endpoint named in the operations.
        slug: String,
        /// The version of its code named.
        version: String,
        /// The key.
        key: String,
        /// How many.
        count: usize,
    },
}

/// Runs the probe; one line per attempt: `<name>: allowed` or `<name>: refused (<error>)`.
pub(crate) async fn run(probe: Probe, host: &RemoteHost) -> Vec<String> {
    if let Probe::BreakProtocol = probe {
        host.send_raw(b"\x05\x00\x00\x00hello".to_vec());
        return vec!["break_protocol: sent".to_owned()];
    }
    match probe {
        Probe::Escape {
            data_dir,
            server_pid,
        } => std::thread::spawn(move || escape(&data_dir, server_pid))
            .join()
            .unwrap_or_else(|_| vec!["probe: panicked".to_owned()]),
        Probe::ForgeKvGet {
            call,
            slug,
            version,
            key,
        } => {
            let outcome = host
                .call_unwindowed(&named(slug, version), call, HostOp::KvGet { key })
                .await;
            vec![match outcome {
                Ok(answer) => format!("forge_kv_get: allowed ({answer:?})"),
                Err(e) => format!("forge_kv_get: refused ({})", e.code),
            }]
        }
        Probe::BreakProtocol => unreachable!("answered above"),
        Probe::FloodKvGet {
            slug,
            version,
            key,
            count,
        } => {
            let code = named(slug, version);
            let calls = (0..count).map(|_| {
                host.call_unwindowed(&code, crate::NO_CALL, HostOp::KvGet { key: key.clone() })
            });
            let outcomes = deno_core::futures::future::join_all(calls).await;
            let mut tally = std::collections::BTreeMap::<String, usize>::new();
            for outcome in outcomes {
                let name = match outcome {
                    Ok(_) => "allowed".to_owned(),
                    Err(e) => format!("refused {}", e.code),
                };
                *tally.entry(name).or_default() += 1;
            }
            tally
                .into_iter()
                .map(|(name, n)| format!("{name}: {n}"))
                .collect()
        }
    }
}

/// The code a forging worker claims its op comes from: the worker's frame names only the slug
/// and version (the server finds the rest in what it sent).
fn named(slug: String, version: String) -> EndpointCode {
    EndpointCode {
        id: String::new(),
        slug,
        version,
        source: String::new(),
        capabilities: Default::default(),
        env: Default::default(),
        limits: None,
        owner: None,
    }
}

fn escape(data_dir: &str, server_pid: u32) -> Vec<String> {
    let line = |name: &str, outcome: Result<(), String>| match outcome {
        Ok(()) => format!("{name}: allowed"),
        Err(e) => format!("{name}: refused ({e})"),
    };
    let io = |r: std::io::Result<()>| r.map_err(|e| e.to_string());
    let read = |path: String| {
        io(std::fs::File::open(path).and_then(|mut f| {
            let mut buf = [0u8; 16];
            f.read(&mut buf).map(drop)
        }))
    };
    let server = Pid::from_raw(i32::try_from(server_pid).unwrap_or(i32::MAX));
    vec![
        line("open_etc_passwd", read("/etc/passwd".into())),
        line("read_server_mem", read(format!("/proc/{server_pid}/mem"))),
        line(
            "read_server_environ",
            read(format!("/proc/{server_pid}/environ")),
        ),
        line("list_data_dir", io(std::fs::read_dir(data_dir).map(drop))),
        line(
            "read_data_dir_file",
            read(format!("{data_dir}/admin_token")),
        ),
        line(
            "create_file_in_data_dir",
            io(std::fs::File::create(format!("{data_dir}/planted")).map(drop)),
        ),
        line(
            "tcp_connect",
            io(TcpStream::connect("127.0.0.1:9").map(drop)),
        ),
        line("udp_socket", io(UdpSocket::bind("127.0.0.1:0").map(drop))),
        line(
            "unix_socket_connect",
            io(UnixStream::connect("/run/anything.sock").map(drop)),
        ),
        line(
            "execve",
            io(std::process::Command::new("/bin/true").status().map(drop)),
        ),
        line(
            "ptrace_attach_server",
            nix::sys::ptrace::attach(server).map_err(|e| e.to_string()),
        ),
        line("process_vm_readv_server", {
            let mut buf = [0u8; 8];
            process_vm_readv(
                server,
                &mut [IoSliceMut::new(&mut buf)],
                &[RemoteIoVec {
                    base: 0x400000,
                    len: 8,
                }],
            )
            .map(drop)
            .map_err(|e| e.to_string())
        }),
    ]
}
