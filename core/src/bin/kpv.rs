//! The `kpv` command line: check manifests, print a node's kube-proxy rules,
//! trace a packet. A thin shell over kpv-core: it reads files, parses flags,
//! and prints what the core's renderers produce. Bad input is a message on
//! stderr and a non-zero exit, never a panic; so is output that cannot be
//! written, except a closed pipe (`kpv rules … | head`), which ends the run
//! quietly as it ends any Unix filter.

use kpv_core::cli::{self, Command};
use std::io::{ErrorKind, Read, Write};
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

/// Write to stderr; if even that fails there is nobody left to tell.
fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Print `stdout` and `stderr`, then exit with `code`. A reader that went
/// away (a closed pipe) is not an error; any other failure to write the
/// output (a full disk) is one line on stderr and exit code 1.
fn finish(stdout: &str, stderr: &str, code: u8) -> ExitCode {
    let written = {
        let mut out = std::io::stdout().lock();
        out.write_all(stdout.as_bytes()).and_then(|()| out.flush())
    };
    say(stderr);
    match written {
        Ok(()) => ExitCode::from(code),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => ExitCode::from(code),
        Err(e) => {
            say(&format!("kpv: cannot write the output: {e}\n"));
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    // `std::env::args` would panic on an argument that is not UTF-8.
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect()
    {
        Ok(a) => a,
        Err(a) => {
            say(&format!("kpv: the argument {a:?} is not UTF-8 text\n"));
            return ExitCode::from(2);
        }
    };
    let cmd = match cli::parse_args(&args) {
        Ok(Command::Help(text)) => return finish(&text, "", 0),
        Ok(c) => c,
        Err(e) => {
            say(&format!("kpv: {e}\nRun `kpv --help` for usage.\n"));
            return ExitCode::from(2);
        }
    };
    let texts = match read_inputs(cmd.files()) {
        Ok(t) => t,
        Err(e) => {
            say(&format!("kpv: {e}\n"));
            return ExitCode::from(2);
        }
    };
    let result = cli::run(&cmd, &texts, cmd.files());
    finish(&result.stdout, &result.stderr, result.code)
}
