//! The generator's self-check under other work: CPU hogs on every core at a higher
//! priority than the generator make its timers wake late, as a busy CI machine does. Its
//! own CPU share stays low, the machine's CPU pressure high: the run must say the machine
//! was busy, and must not call the generator the bottleneck (whose figures would then be
//! a lower bound). The hogs run niced too, below the other tests, and end by themselves.

use crate::support::{fleet_program, Served};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// A busy loop on each CPU for at most 40 s, at nice 10: above the generator (nice 19),
/// below everything else. Each in its own process group, so [`Hogs`] ends the loop and
/// not only the `timeout` that would have.
fn hogs() -> Hogs {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    Hogs(
        (0..cpus)
            .map(|_| {
                Command::new("nice")
                    .args([
                        "-n",
                        "10",
                        "timeout",
                        "40",
                        "sh",
                        "-c",
                        "while :; do :; done",
                    ])
                    .stdout(Stdio::null())
                    .process_group(0)
                    .spawn()
                    .expect("a CPU hog")
            })
            .collect(),
    )
}

/// The hogs, killed with their process groups when dropped (a failed assertion too).
struct Hogs(Vec<Child>);

impl Drop for Hogs {
    fn drop(&mut self) {
        for h in &mut self.0 {
            let group = nix::unistd::Pid::from_raw(-(h.id() as i32));
            let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
            let _ = h.wait();
        }
    }
}

#[test]
fn a_busy_machine_is_said_and_not_called_a_saturated_generator() {
    if !std::path::Path::new("/proc/pressure/cpu").exists() {
        eprintln!("skipped: this kernel has no /proc/pressure/cpu");
        return;
    }
    let server = Served::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("results");
    let busy = hogs();
    // Light load: the generator needs little CPU, it just cannot get it when it wakes.
    let run = Command::new("nice")
        .args([
            "-n",
            "19",
            fleet_program(),
            "run",
            "--target",
            &server.url(),
        ])
        .args(["--clients", "2", "--think", "20ms", "--duration", "12s"])
        .args(["--interval", "250ms", "--out"])
        .arg(&out)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("runs");
    drop(busy);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary");
    let json: Value = serde_json::from_str(&text).expect("json");
    let g = &json["soak"]["generator"];
    assert_eq!(g["bottleneck"], false, "{g:#}\n{stdout}");
    assert_eq!(g["machine_busy"], true, "{g:#}\n{stdout}");
    assert!(g["cpu_pressure_p99"].as_f64() > Some(0.1), "{g:#}");
    assert!(g["cpu_share_max"].as_f64() < Some(0.5), "{g:#}");
    assert!(
        stdout.contains("NOTE: the machine was busy with other work")
            && !stdout.contains("WARNING: the generator"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).expect("report");
    assert!(page.contains("The machine was busy with other work"));
    assert!(!page.contains("The generator was the bottleneck"));
}
