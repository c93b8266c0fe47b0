//! The floor under toolhost's process boundary (issue 40's target for it): round trips of a
//! request and an answer of given sizes over two pipes between this process and a child that
//! answers each request, each side blocking in `read` until the other writes, as a sandbox
//! worker and the server do, but with nothing else: no frames to encode or parse, no thread
//! hand-off inside either process. Prints the wall time and the CPU time of both processes a
//! round trip. `pairs` runs that many (thread, child) pairs at once, to see the floor when the
//! cores are busy (the benchmark's load) and not only when each wake-up finds an idle core.
//!
//!   cargo run --release -p pipe-floor -- ROUND_TRIPS REQUEST_BYTES ANSWER_BYTES [PAIRS]

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// User and system CPU seconds of a process and its reaped children, from `/proc/{pid}/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rfind(')').map_or("", |at| &stat[at + 2..]);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime, stime, cutime, cstime: fields 14-17 of the file, 11-14 after the name.
    let ticks: f64 = (11..15)
        .filter_map(|i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

/// The child: answers every request of `request_bytes` with `answer_bytes`, until EOF.
fn answer(answer_bytes: usize, request_bytes: usize) {
    let answer = vec![b'a'; answer_bytes];
    let mut request = vec![0u8; request_bytes];
    let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
    while input.read_exact(&mut request).is_ok() {
        if output.write_all(&answer).and_then(|()| output.flush()).is_err() {
            return;
        }
    }
}

fn number(args: &[String], at: usize, default: Option<usize>) -> usize {
    match args.get(at).map(|a| a.parse()) {
        Some(Ok(n)) => n,
        None if default.is_some() => default.unwrap_or_default(),
        _ => {
            eprintln!("usage: pipe-floor ROUND_TRIPS REQUEST_BYTES ANSWER_BYTES [PAIRS]");
            std::process::exit(2);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        answer(number(&args, 2, None), number(&args, 3, None));
        return;
    }
    let trips = number(&args, 1, None);
    let request_bytes = number(&args, 2, None);
    let answer_bytes = number(&args, 3, None);
    let pairs = number(&args, 4, Some(1));
    let exe = std::env::current_exe().expect("own path");
    let mut children: Vec<Child> = (0..pairs)
        .map(|_| {
            Command::new(&exe)
                .args(["child", &answer_bytes.to_string(), &request_bytes.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn the child")
        })
        .collect();
    let pids: Vec<u32> = std::iter::once(std::process::id())
        .chain(children.iter().map(Child::id))
        .collect();
    let cpu_before: f64 = pids.iter().map(|&pid| cpu_seconds(pid)).sum();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for child in &mut children {
            let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take())
            else {
                continue;
            };
            scope.spawn(move || {
                let request = vec![b'r'; request_bytes];
                let mut answer = vec![0u8; answer_bytes];
                for _ in 0..trips {
                    to_child.write_all(&request).expect("write the request");
                    from_child.read_exact(&mut answer).expect("read the answer");
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu = pids.iter().map(|&pid| cpu_seconds(pid)).sum::<f64>() - cpu_before;
    let all = (trips * pairs) as f64;
    println!(
        "{pairs} pair(s) x {trips} round trips, request {request_bytes} B, answer {answer_bytes} B: \
         {:.1} µs wall and {:.1} µs CPU a round trip, {:.0} round trips a second",
        wall * 1e6 / trips as f64,
        cpu * 1e6 / all,
        all / wall
    );
    for mut child in children {
        let _ = child.wait();
    }
}
