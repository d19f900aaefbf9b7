//! Files dropped on or picked for the editor: read, checked for size and
//! UTF-8, and handed to the editor, or a problem said in the UI language.
use crate::i18n::{tr, Lang};
use leptos::prelude::*;

/// Why a file could not be loaded into the editor.
#[derive(Clone, Debug, PartialEq)]
pub enum FileProblem {
    TooLarge { bytes: f64 },
    NotUtf8 { at: usize },
    Unreadable,
}

/// Largest file accepted (the YAML reader's own limit).
pub fn max_file_bytes() -> usize {
    kpv_core::yaml::Limits::default().max_bytes
}

/// A file's bytes as editor text: UTF-8 (a byte-order mark is dropped).
pub fn decode_file(bytes: &[u8]) -> Result<String, FileProblem> {
    if bytes.len() > max_file_bytes() {
        return Err(FileProblem::TooLarge {
            bytes: bytes.len() as f64,
        });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes)
        .map(str::to_string)
        .map_err(|e| FileProblem::NotUtf8 {
            at: e.valid_up_to(),
        })
}

/// The message for a file problem, in the UI language.
fn problem_text(l: Lang, name: &str, p: &FileProblem) -> String {
    match p {
        FileProblem::TooLarge { bytes } => format!(
            "{name}: {} ({} MiB > {} MiB)",
            tr(l, "editor.file-too-large"),
            crate::components::one_decimal(bytes / 1_048_576.0),
            max_file_bytes() / 1_048_576
        ),
        FileProblem::NotUtf8 { at } => {
            format!(
                "{name}: {} ({} {at})",
                tr(l, "editor.file-not-utf8"),
                tr(l, "editor.byte")
            )
        }
        FileProblem::Unreadable => format!("{name}: {}", tr(l, "editor.file-unreadable")),
    }
}

/// Read `file` and hand its text to `load` (which keeps the user's text).
pub(super) fn load_file(
    file: web_sys::File,
    load: impl FnOnce(String) + 'static,
    problem: RwSignal<Option<String>>,
) {
    let l = crate::components::lang();
    let name = file.name();
    let size = file.size();
    if size > max_file_bytes() as f64 {
        problem.set(Some(problem_text(
            l.get_untracked(),
            &name,
            &FileProblem::TooLarge { bytes: size },
        )));
        return;
    }
    leptos::task::spawn_local(async move {
        let bytes = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
            .await
            .map(|buf| js_sys::Uint8Array::new(&buf).to_vec())
            .map_err(|_| FileProblem::Unreadable);
        match bytes.and_then(|b| decode_file(&b)) {
            Ok(text) => {
                problem.set(None);
                load(text);
            }
            Err(p) => problem.set(Some(problem_text(l.get_untracked(), &name, &p))),
        }
    });
}
