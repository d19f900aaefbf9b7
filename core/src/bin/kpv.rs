//! The `kpv` command line: check manifests, print a node's kube-proxy rules,
//! trace a packet. A thin shell over kpv-core: it reads files, parses flags,
//! and prints what the core's renderers produce. Bad input is a message on
//! stderr and a non-zero exit, never a panic.

use kpv_core::cli::{self, Command};
use std::io::Read;
use std::process::ExitCode;

fn read_inputs(files: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for f in files {
        let text = if f == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            s
        } else {
            let bytes = std::fs::read(f).map_err(|e| format!("cannot read {f}: {e}"))?;
            String::from_utf8(bytes).map_err(|e| {
                format!(
                    "{f} is not UTF-8 text (invalid byte at offset {}); Kubernetes manifests are UTF-8",
                    e.utf8_error().valid_up_to()
                )
            })?
        };
        out.push(text);
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = match cli::parse_args(&args) {
        Ok(Command::Help(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Ok(c) => c,
        Err(e) => {
            eprintln!("kpv: {e}\nRun `kpv --help` for usage.");
            return ExitCode::from(2);
        }
    };
    let texts = match read_inputs(cmd.files()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kpv: {e}");
            return ExitCode::from(2);
        }
    };
    let result = cli::run(&cmd, &texts, cmd.files());
    if !result.stdout.is_empty() {
        print!("{}", result.stdout);
    }
    if !result.stderr.is_empty() {
        eprint!("{}", result.stderr);
    }
    ExitCode::from(result.code)
}
