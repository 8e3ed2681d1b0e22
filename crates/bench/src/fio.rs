//! Running fio and reading its JSON output.
//!
//! fio is the baseline for page I/O: it issues the same reads and writes as Tarn (same
//! file, block size, pattern and concurrency) with nothing on top, so its IOPS are what
//! the device and kernel allow. [`Fio::find_or_install`] finds the `fio` program,
//! installing it with `apt-get` when running as root; [`Fio::run`] runs one
//! [`FioJob`] and [`parse_output`] turns fio's `--output-format=json` text into a
//! [`FioResult`].
//!
//! Every job is run with `--group_reporting` and `--unified_rw_reporting=1`, so fio
//! reports one "mixed" section covering reads and writes of all its jobs; percentiles
//! are those of completion latency (`clat_ns`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;
use serde_json::Value;

use crate::report::Output;
use crate::{BenchError, Result};

/// How fio issues I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FioEngine {
    /// `ioengine=psync`: `jobs` threads, each with one synchronous `pread`/`pwrite`.
    Psync { jobs: u32 },
    /// `ioengine=io_uring`: one job keeping `depth` requests in flight.
    IoUring { depth: u32 },
}

/// One fio run.
#[derive(Clone, Debug)]
pub struct FioJob {
    pub file: PathBuf,
    pub block_size_bytes: u32,
    /// Bytes each job addresses: the whole file for random patterns, one region for
    /// sequential ones (with `offset_increment_bytes` moving each job to its region).
    pub size_bytes: u64,
    pub offset_increment_bytes: Option<u64>,
    /// fio's `rw`: `read`, `randread`, `randwrite` or `randrw`.
    pub rw: &'static str,
    /// `rwmixread`, for `randrw`.
    pub read_mix_pct: Option<u32>,
    pub engine: FioEngine,
    /// `direct=1` (O_DIRECT).
    pub direct: bool,
    pub runtime_ms: u64,
    /// Open the file read-only (`--readonly`): fio then refuses to write to it.
    pub read_only: bool,
}

/// fio's `--runtime` for a run of `seconds`, in whole milliseconds (at least 1).
pub fn runtime_ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round().max(1.0) as u64
}

/// Checks the seconds of a fio run given as a bench option.
pub fn check_seconds(seconds: f64) -> Result<()> {
    if seconds > 0.0 && seconds <= 600.0 {
        Ok(())
    } else {
        Err(BenchError::Options(format!(
            "fio seconds must be more than 0 and at most 600, not {seconds}"
        )))
    }
}

impl FioJob {
    /// A read-only `O_DIRECT` read (`rw` is `read` or `randread`) of the first
    /// `size_bytes` of `file` in `block_size_bytes` blocks, with io_uring keeping
    /// `depth` requests in flight, for `seconds`.
    pub fn uring_read(
        file: &Path,
        rw: &'static str,
        size_bytes: u64,
        block_size_bytes: u32,
        depth: u32,
        seconds: f64,
    ) -> FioJob {
        FioJob {
            file: file.to_path_buf(),
            block_size_bytes,
            size_bytes,
            offset_increment_bytes: None,
            rw,
            read_mix_pct: None,
            engine: FioEngine::IoUring { depth },
            direct: true,
            runtime_ms: runtime_ms(seconds),
            read_only: true,
        }
    }

    /// fio's command-line arguments for this job.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec![
            "--name=tarn-baseline".to_string(),
            format!("--filename={}", self.file.display()),
            format!("--bs={}", self.block_size_bytes),
            format!("--size={}", self.size_bytes),
            format!("--rw={}", self.rw),
            format!("--direct={}", u8::from(self.direct)),
            "--time_based".into(),
            format!("--runtime={}ms", self.runtime_ms),
            "--invalidate=1".into(),
            "--norandommap".into(),
            "--group_reporting".into(),
            "--unified_rw_reporting=1".into(),
            "--allow_file_create=0".into(),
            "--output-format=json".into(),
            "--eta=never".into(),
        ];
        match self.engine {
            FioEngine::Psync { jobs } => args.extend([
                "--ioengine=psync".into(),
                "--thread".into(),
                format!("--numjobs={jobs}"),
            ]),
            FioEngine::IoUring { depth } => {
                args.extend(["--ioengine=io_uring".into(), format!("--iodepth={depth}")])
            }
        }
        if let Some(increment) = self.offset_increment_bytes {
            args.push(format!("--offset_increment={increment}"));
        }
        if let Some(pct) = self.read_mix_pct {
            args.push(format!("--rwmixread={pct}"));
        }
        if self.read_only {
            args.push("--readonly".into());
        }
        args
    }
}

/// What one fio run measured, over all its jobs, reads and writes together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioResult {
    pub iops: f64,
    pub total_ios: u64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// User and system CPU, in percent of the jobs' run time (fio's `usr_cpu`, `sys_cpu`).
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    /// CPU time per I/O in microseconds: (usr + sys) x the jobs' summed run time / I/Os.
    pub cpu_us_per_io: Option<f64>,
}

impl FioResult {
    /// Seconds of I/O this result covers (its I/Os at its rate).
    fn seconds(&self) -> f64 {
        if self.iops > 0.0 {
            self.total_ios as f64 / self.iops
        } else {
            0.0
        }
    }

    /// Runs of the same job as one ([`FioResult::merge`] in order); `None` when empty.
    pub fn merge_all(results: &[FioResult]) -> Option<FioResult> {
        results.iter().cloned().reduce(|a, b| a.merge(&b))
    }

    /// Two runs of the same job as one: I/Os and time summed; percentiles, CPU shares
    /// and CPU per I/O averaged, weighted by I/Os (percentiles so merged are an
    /// approximation; the IOPS are exact).
    pub fn merge(&self, other: &FioResult) -> FioResult {
        let total_ios = self.total_ios + other.total_ios;
        let seconds = self.seconds() + other.seconds();
        let by_ios = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if total_ios > 0 => {
                Some((a * self.total_ios as f64 + b * other.total_ios as f64) / total_ios as f64)
            }
            (a, b) => a.or(b),
        };
        let by_time = |a: f64, b: f64| {
            if seconds > 0.0 {
                (a * self.seconds() + b * other.seconds()) / seconds
            } else {
                a
            }
        };
        FioResult {
            iops: if seconds > 0.0 {
                total_ios as f64 / seconds
            } else {
                0.0
            },
            total_ios,
            p50_us: by_ios(self.p50_us, other.p50_us),
            p99_us: by_ios(self.p99_us, other.p99_us),
            usr_cpu_pct: by_time(self.usr_cpu_pct, other.usr_cpu_pct),
            sys_cpu_pct: by_time(self.sys_cpu_pct, other.sys_cpu_pct),
            cpu_us_per_io: by_ios(self.cpu_us_per_io, other.cpu_us_per_io),
        }
    }
}

/// Parses fio's `--output-format=json` output (text before the first `{`, such as a
/// warning fio printed to stdout, is skipped).
pub fn parse_output(text: &str) -> std::result::Result<FioResult, String> {
    let start = text
        .find('{')
        .ok_or_else(|| "no JSON object in fio's output".to_string())?;
    let document: Value = serde_json::from_str(&text[start..])
        .map_err(|e| format!("fio's JSON output does not parse: {e}"))?;
    let jobs = document["jobs"]
        .as_array()
        .filter(|jobs| !jobs.is_empty())
        .ok_or_else(|| "fio's JSON output has no jobs".to_string())?;
    let mut result = FioResult {
        iops: 0.0,
        total_ios: 0,
        p50_us: None,
        p99_us: None,
        usr_cpu_pct: 0.0,
        sys_cpu_pct: 0.0,
        cpu_us_per_io: None,
    };
    let mut cpu_ms = 0.0;
    let mut most_ios = 0;
    for job in jobs {
        let error = job["error"].as_i64().unwrap_or(0);
        if error != 0 {
            return Err(format!(
                "job '{}' failed with error {error}",
                job["jobname"].as_str().unwrap_or("?")
            ));
        }
        let sections = io_sections(job);
        let ios: u64 = sections.iter().map(|s| number(s, "total_ios") as u64).sum();
        result.iops += sections.iter().map(|s| number(s, "iops")).sum::<f64>();
        result.total_ios += ios;
        // Percentiles cannot be merged; take the busiest section of the busiest job.
        // With unified reporting and group reporting there is exactly one.
        if ios >= most_ios {
            most_ios = ios;
            if let Some(busiest) = sections
                .iter()
                .max_by_key(|s| number(s, "total_ios") as u64)
            {
                result.p50_us = percentile_us(busiest, "50.000000");
                result.p99_us = percentile_us(busiest, "99.000000");
            }
        }
        let (usr, sys) = (number(job, "usr_cpu"), number(job, "sys_cpu"));
        result.usr_cpu_pct = usr;
        result.sys_cpu_pct = sys;
        cpu_ms += (usr + sys) / 100.0 * number(job, "job_runtime");
    }
    if result.total_ios > 0 {
        result.cpu_us_per_io = Some(cpu_ms * 1000.0 / result.total_ios as f64);
    }
    Ok(result)
}

/// The job's I/O sections: `mixed` under unified reporting, else `read` and `write`.
fn io_sections(job: &Value) -> Vec<&Value> {
    if job["mixed"].is_object() {
        return vec![&job["mixed"]];
    }
    ["read", "write", "trim"]
        .iter()
        .map(|name| &job[*name])
        .filter(|section| section.is_object())
        .collect()
}

fn number(value: &Value, key: &str) -> f64 {
    value[key].as_f64().unwrap_or(0.0)
}

fn percentile_us(section: &Value, key: &str) -> Option<f64> {
    section["clat_ns"]["percentile"][key]
        .as_f64()
        .map(|ns| ns / 1000.0)
}

/// The fio program.
pub struct Fio {
    program: PathBuf,
    version: String,
}

impl Fio {
    /// Finds `fio` on the `PATH`; if it is missing, installs it with
    /// `apt-get install -y fio` when running as root, else fails saying how to
    /// install it.
    pub fn find_or_install(output: &Output) -> Result<Fio> {
        if let Some(program) = find_program("fio") {
            return Fio::at(program);
        }
        if !running_as_root() {
            return Err(BenchError::Fio(
                "fio is not installed and this is not root, so it cannot be installed \
                 here; install it (e.g. `sudo apt-get install -y fio`) and rerun"
                    .into(),
            ));
        }
        output.progress("fio is not installed; installing it with apt-get ...");
        if !apt_get(&["install", "-y", "fio"])? {
            apt_get(&["update"])?;
            if !apt_get(&["install", "-y", "fio"])? {
                return Err(BenchError::Fio(
                    "`apt-get install -y fio` failed (see its output above)".into(),
                ));
            }
        }
        let program = find_program("fio").ok_or_else(|| {
            BenchError::Fio("apt-get installed fio, but it is not on the PATH".into())
        })?;
        Fio::at(program)
    }

    /// [`Fio::find_or_install`] if `wanted`, else `None`.
    pub fn find_or_install_if(wanted: bool, output: &Output) -> Result<Option<Fio>> {
        wanted.then(|| Fio::find_or_install(output)).transpose()
    }

    fn at(program: PathBuf) -> Result<Fio> {
        let out = Command::new(&program)
            .arg("--version")
            .output()
            .map_err(|e| BenchError::Fio(format!("cannot run '{}': {e}", program.display())))?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(Fio { program, version })
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Runs `job` and parses what fio measured.
    pub fn run(&self, job: &FioJob) -> Result<FioResult> {
        let args = job.args();
        let out = Command::new(&self.program)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                BenchError::Fio(format!("cannot run '{}': {e}", self.program.display()))
            })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            return Err(BenchError::Fio(format!(
                "`fio {}` exited with {}: {}",
                args.join(" "),
                out.status,
                stderr.trim()
            )));
        }
        parse_output(&stdout)
            .map_err(|reason| BenchError::Fio(format!("`fio {}`: {reason}", args.join(" "))))
    }
}

fn find_program(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// True if the effective user id is 0, from `/proc/self/status`.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:"))?;
            line.split_whitespace().nth(2).map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

/// Runs `apt-get` with its output on stderr (stdout may carry JSON); true on success.
fn apt_get(args: &[&str]) -> Result<bool> {
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| {
            BenchError::Fio(format!("fio is not installed and apt-get cannot run: {e}"))
        })?;
    Ok(status.success())
}

#[cfg(test)]
mod tests {

    #[test]
    fn merged_rounds_give_exact_iops_and_io_weighted_latency() {
        let round = |ios: u64, seconds: f64, p50: f64| FioResult {
            iops: ios as f64 / seconds,
            total_ios: ios,
            p50_us: Some(p50),
            p99_us: None,
            usr_cpu_pct: 10.0,
            sys_cpu_pct: 20.0,
            cpu_us_per_io: Some(5.0),
        };
        let merged = round(1000, 1.0, 100.0).merge(&round(3000, 2.0, 200.0));
        assert_eq!(merged.total_ios, 4000);
        assert!((merged.iops - 4000.0 / 3.0).abs() < 1e-9, "{}", merged.iops);
        assert!((merged.p50_us.unwrap() - 175.0).abs() < 1e-9);
        assert_eq!(merged.p99_us, None);
        assert!((merged.sys_cpu_pct - 20.0).abs() < 1e-9);
    }

    use super::*;

    /// fio 3.33 output for `--rw=randrw --numjobs=2 --group_reporting
    /// --unified_rw_reporting=1`, trimmed to the fields Tarn reads (plus a warning line
    /// fio sometimes prints before the JSON).
    const SAMPLE: &str = r#"fio: note: some warning
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "tarn-baseline",
      "groupid" : 0,
      "error" : 0,
      "mixed" : {
        "io_bytes" : 427343872,
        "iops" : 26056.943057,
        "runtime" : 1001,
        "total_ios" : 26083,
        "clat_ns" : {
          "min" : 20480,
          "percentile" : {
            "1.000000" : 27000,
            "50.000000" : 63232,
            "99.000000" : 187392,
            "99.900000" : 403456
          }
        }
      },
      "job_runtime" : 2000,
      "usr_cpu" : 1.3,
      "sys_cpu" : 21.45
    }
  ]
}
"#;

    #[test]
    fn parses_iops_percentiles_and_cpu_per_io() {
        let result = parse_output(SAMPLE).unwrap();
        assert_eq!(result.total_ios, 26083);
        assert!((result.iops - 26056.943057).abs() < 1e-6);
        assert_eq!(result.p50_us, Some(63.232));
        assert_eq!(result.p99_us, Some(187.392));
        // (1.3 + 21.45)% of 2000 ms = 455 ms of CPU over 26083 I/Os.
        let cpu = result.cpu_us_per_io.unwrap();
        assert!((cpu - 455_000.0 / 26083.0).abs() < 1e-6, "{cpu}");
    }

    #[test]
    fn separate_read_and_write_sections_are_added_up() {
        let text = r#"{"jobs": [{"jobname": "j", "error": 0,
            "read":  {"iops": 700.0, "total_ios": 700,
                      "clat_ns": {"percentile": {"50.000000": 1000, "99.000000": 9000}}},
            "write": {"iops": 300.0, "total_ios": 300,
                      "clat_ns": {"percentile": {"50.000000": 2000, "99.000000": 8000}}},
            "job_runtime": 1000, "usr_cpu": 10.0, "sys_cpu": 40.0}]}"#;
        let result = parse_output(text).unwrap();
        assert_eq!((result.iops, result.total_ios), (1000.0, 1000));
        assert_eq!((result.p50_us, result.p99_us), (Some(1.0), Some(9.0)));
        assert_eq!(result.cpu_us_per_io, Some(500.0));
    }

    #[test]
    fn failures_and_garbage_are_errors() {
        let failed = r#"{"jobs": [{"jobname": "j", "error": 5}]}"#;
        assert!(parse_output(failed).unwrap_err().contains("error 5"));
        assert!(parse_output("fio: no such file").is_err());
        assert!(parse_output(r#"{"jobs": []}"#).is_err());
    }

    #[test]
    fn arguments_match_the_engine_and_pattern() {
        let job = FioJob {
            file: "/d/000001.tdf".into(),
            block_size_bytes: 16384,
            size_bytes: 1 << 20,
            offset_increment_bytes: Some(1 << 20),
            rw: "read",
            read_mix_pct: None,
            engine: FioEngine::Psync { jobs: 8 },
            direct: true,
            runtime_ms: 2000,
            read_only: true,
        };
        let args = job.args().join(" ");
        for expected in [
            "--filename=/d/000001.tdf",
            "--bs=16384",
            "--rw=read",
            "--direct=1",
            "--ioengine=psync",
            "--numjobs=8",
            "--offset_increment=1048576",
            "--runtime=2000ms",
            "--readonly",
            "--output-format=json",
        ] {
            assert!(args.contains(expected), "{expected} missing from {args}");
        }
        let uring = FioJob {
            engine: FioEngine::IoUring { depth: 32 },
            rw: "randrw",
            read_mix_pct: Some(70),
            offset_increment_bytes: None,
            read_only: false,
            ..job
        };
        let args = uring.args().join(" ");
        assert!(args.contains("--ioengine=io_uring") && args.contains("--iodepth=32"));
        assert!(args.contains("--rwmixread=70") && !args.contains("--readonly"));
    }
}
