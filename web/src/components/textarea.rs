//! The editor's text area and its gutter of line numbers, over a draft that
//! may be megabytes long: the textarea holds a window of whole lines
//! around the caret ([`textwindow`]) and edits are spliced back into the
//! draft; for such a text the area keeps its own undo history ([`undo`]),
//! since moving the window clears the browser's.
//!
//! [`Area`] is the handle the editor drives (show a loaded text, jump to a
//! line); [`AreaView`] is its markup. What an edit means to the editor
//! (its text is the user's own, to be checked and saved) is the editor's:
//! the area calls `on_edit` after every change the user makes.

use super::textwindow::{self, Window};
use super::undo::{self, History};
use leptos::html::{Pre, Textarea};
use leptos::prelude::*;
use std::collections::BTreeSet;

/// The textarea's line height in CSS pixels (12 px × 1.45, `style.css`).
const LINE_PX: f64 = 17.4;

/// What the gutter marks on a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Plain,
    Warning,
    Error,
}

/// The gutter's line numbers as runs of text: (mark, "n\nn+1\n…").
pub fn gutter_runs(lines: usize, bad: &BTreeSet<usize>) -> Vec<(Mark, String)> {
    gutter_runs_from(0, lines, bad, &BTreeSet::new())
}

/// The gutter of a window: `lines` numbers from line `first + 1`; a line
/// in error or with a warning is a run of its own.
pub fn gutter_runs_from(
    first: usize,
    lines: usize,
    bad: &BTreeSet<usize>,
    warned: &BTreeSet<usize>,
) -> Vec<(Mark, String)> {
    let mut runs: Vec<(Mark, String)> = Vec::new();
    for i in first + 1..=first + lines {
        let mark = if bad.contains(&i) {
            Mark::Error
        } else if warned.contains(&i) {
            Mark::Warning
        } else {
            Mark::Plain
        };
        match runs.last_mut() {
            Some((m, text)) if *m == mark && mark == Mark::Plain => {
                text.push_str(&i.to_string());
                text.push('\n');
            }
            _ => runs.push((mark, format!("{i}\n"))),
        }
    }
    runs
}

/// The text area's state: the draft it edits, the window the textarea
/// holds, and the undo history of a large text. Copy; every field is a
/// signal or a stored value.
#[derive(Clone, Copy)]
pub struct Area {
    draft: RwSignal<String>,
    /// The textarea's window onto the draft (the whole text unless large).
    win: StoredValue<Window>,
    /// The lines the gutter numbers: (first, how many).
    view_lines: RwSignal<(usize, usize)>,
    /// The textarea's last scroll position: a window moves only when the
    /// user scrolls toward one of its inner edges.
    last_top: StoredValue<i32>,
    /// The next input replaces the whole text, not just the window: the
    /// user selected all the textarea holds (Ctrl+A) before typing.
    replace_all: StoredValue<bool>,
    history: StoredValue<History>,
    el: NodeRef<Textarea>,
    gutter: NodeRef<Pre>,
}

impl Area {
    pub fn new(draft: RwSignal<String>) -> Area {
        Area {
            draft,
            win: StoredValue::new(draft.with_untracked(|d| Window::whole(d))),
            view_lines: RwSignal::new((0, draft.with_untracked(|d| d.lines().count().max(1)))),
            last_top: StoredValue::new(0),
            replace_all: StoredValue::new(false),
            history: StoredValue::new(History::default()),
            el: NodeRef::new(),
            gutter: NodeRef::new(),
        }
    }

    /// Put the window of `text` around byte `at` in the textarea; `place`:
    /// put the caret there and scroll it into view. Otherwise (a scroll
    /// moved the window) the caret keeps its place in the text when the
    /// new window holds it: a textarea given a new value puts its caret at
    /// the end, which would send the window back where it came from.
    fn put(self, text: &str, at: usize, place: bool) {
        let old = self.win.get_value();
        let w = textwindow::around(text, at);
        self.win.set_value(w);
        let shown = &text[w.start..w.end];
        self.view_lines
            .set((w.first_line, shown.lines().count().max(1)));
        let Some(a) = self.el.get_untracked() else {
            return;
        };
        let kept = (!place).then(|| {
            let caret = a.selection_start().ok().flatten().unwrap_or(0) as usize;
            old.start + textwindow::utf16_to_byte(&a.value(), caret)
        });
        a.set_value(shown);
        self.last_top.set_value(a.scroll_top());
        if let Some(abs) = kept.filter(|b| (w.start..=w.end).contains(b)) {
            let caret = textwindow::byte_to_utf16(shown, abs - w.start) as u32;
            let top = a.scroll_top();
            let _ = a.set_selection_range(caret, caret);
            a.set_scroll_top(top);
        }
        if place {
            let inside = at.saturating_sub(w.start).min(shown.len());
            let caret = textwindow::byte_to_utf16(shown, inside) as u32;
            let _ = a.set_selection_range(caret, caret);
            let line = shown.as_bytes()[..inside]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            let top = ((line as f64 - 3.0).max(0.0) * LINE_PX) as i32;
            a.set_scroll_top(top);
            self.last_top.set_value(a.scroll_top());
            if let Some(g) = self.gutter.get_untracked() {
                g.set_scroll_top(top);
            }
        }
    }

    /// Show the draft's text, set by the app (a load, not the user's
    /// typing): there is nothing of the user's to undo.
    pub fn show(self) {
        self.history.set_value(History::default());
        self.draft.with_untracked(|d| self.put(d, 0, false));
    }

    /// Go to 1-based line `line` of the draft (a diagnostic's line).
    pub fn jump(self, line: usize) {
        self.draft.with_untracked(|d| {
            let at = textwindow::line_start(d, line.saturating_sub(1));
            self.put(d, at, true)
        });
        if let Some(a) = self.el.get_untracked() {
            let _ = a.focus();
        }
    }

    /// Move the window when the caret nears an edge of it that is not the
    /// text's own (arrows, Page Down, a click, typing).
    fn follow_caret(self) {
        let Some(a) = self.el.get_untracked() else {
            return;
        };
        let w = self.win.get_value();
        let (whole, len) = self.draft.with_untracked(|d| (w.is_whole(d), d.len()));
        if whole {
            return;
        }
        // A selection (select all, a drag) stays as it is.
        let (from, to) = (
            a.selection_start().ok().flatten(),
            a.selection_end().ok().flatten(),
        );
        if from != to {
            return;
        }
        let shown = a.value();
        let caret = textwindow::utf16_to_byte(&shown, from.unwrap_or(0) as usize);
        if textwindow::near_inner_edge(w, len, &shown, caret) {
            self.draft
                .with_untracked(|d| self.put(d, w.start + caret, true));
        }
    }

    /// The textarea now holds `shown` after the user's input: splice it
    /// into the draft (or, for a script's value or an edit of everything
    /// selected, replace the draft) and note the edit for undo.
    fn input(self, ev: &leptos::ev::Event) {
        let scripted = js_sys::Reflect::get(ev, &"inputType".into())
            .ok()
            .and_then(|v| v.as_string())
            .is_none_or(|t| t.is_empty());
        let all = self
            .replace_all
            .try_update_value(std::mem::take)
            .unwrap_or(false)
            || scripted;
        let shown = event_target_value(ev);
        let w = self.win.get_value();
        let (text, w, edit, before_len) = self.draft.with_untracked(|d| {
            if all || w.is_whole(d) {
                let large = d.len().max(shown.len()) >= textwindow::WINDOW_AT;
                let edit = if large { undo::diff(d, &shown) } else { None };
                (shown.clone(), Window::whole(&shown), edit, d.len())
            } else {
                let edit = undo::diff(&d[w.start..w.end], &shown).map(|e| undo::Edit {
                    at: e.at + w.start,
                    ..e
                });
                let (text, w) = textwindow::splice(d, w, &shown);
                (text, w, edit, d.len())
            }
        });
        self.history
            .update_value(|h| h.record(edit, before_len, text.len()));
        self.win.set_value(w);
        self.view_lines
            .set((w.first_line, shown.lines().count().max(1)));
        let pasted_large = w.is_whole(&text) && text.len() >= textwindow::WINDOW_AT;
        self.draft.set(text);
        if pasted_large {
            let el = event_target::<web_sys::HtmlTextAreaElement>(ev);
            let at = el.selection_start().ok().flatten().unwrap_or(0) as usize;
            let caret = textwindow::utf16_to_byte(&shown, at);
            self.draft.with_untracked(|d| self.put(d, caret, true));
        } else {
            self.follow_caret();
        }
    }

    /// Before an input: note whether it replaces everything the window
    /// holds (so the whole text).
    fn before_input(self, el: &web_sys::HtmlTextAreaElement) {
        let w = self.win.get_value();
        let windowed = self.draft.with_untracked(|d| !w.is_whole(d));
        let (from, to) = (
            el.selection_start().ok().flatten(),
            el.selection_end().ok().flatten(),
        );
        let everything = from == Some(0) && to == Some(el.text_length());
        self.replace_all
            .set_value(windowed && everything && el.text_length() > 0);
    }

    /// Undo (or redo) the last edit of a large text on the whole draft;
    /// false when there is none (the browser's own undo then runs).
    fn step_history(self, redo: bool) -> bool {
        let stepped = self.draft.with_untracked(|d| {
            self.history
                .try_update_value(|h| if redo { h.redo(d) } else { h.undo(d) })
                .flatten()
        });
        let Some((text, caret)) = stepped else {
            return false;
        };
        self.draft.set(text);
        self.draft.with_untracked(|d| self.put(d, caret, true));
        true
    }

    /// The textarea scrolled to `top`: toward an inner edge of the window,
    /// move the window there, keeping the line at the top where it is.
    fn scrolled(self, el: &web_sys::HtmlTextAreaElement) {
        let top = el.scroll_top();
        if let Some(g) = self.gutter.get() {
            g.set_scroll_top(top);
        }
        let prev = self.last_top.get_value();
        self.last_top.set_value(top);
        let w = self.win.get_value();
        let (whole, len) = self.draft.with_untracked(|d| (w.is_whole(d), d.len()));
        let edge = (LINE_PX * 5.0) as i32;
        let near_top = top < prev && w.start > 0 && top < edge;
        let near_end =
            top > prev && w.end < len && top + el.client_height() > el.scroll_height() - edge;
        if whole || !(near_top || near_end) {
            return;
        }
        let line = w.first_line + (top as f64 / LINE_PX) as usize;
        let at = if near_top { w.start } else { w.end };
        self.draft.with_untracked(|d| self.put(d, at, false));
        let w2 = self.win.get_value();
        let top2 = (line.saturating_sub(w2.first_line) as f64 * LINE_PX) as i32;
        el.set_scroll_top(top2);
        self.last_top.set_value(el.scroll_top());
        if let Some(g) = self.gutter.get() {
            g.set_scroll_top(top2);
        }
    }
}

/// The gutter and the textarea. `errors` and `warnings` are the lines the
/// gutter marks; `on_edit` runs after each change the user makes.
#[component]
pub fn AreaView(
    area: Area,
    errors: Memo<BTreeSet<usize>>,
    warnings: Memo<BTreeSet<usize>>,
    on_edit: Callback<()>,
) -> impl IntoView {
    // The textarea starts with the draft.
    Effect::new(move |_| {
        if area.el.get().is_some() {
            area.show();
        }
    });
    let undo_key = move |ev: leptos::ev::KeyboardEvent| {
        let ctrl = ev.ctrl_key() || ev.meta_key();
        let redo = match ev.key().to_lowercase().as_str() {
            "z" if ctrl => ev.shift_key(),
            "y" if ctrl => true,
            _ => return,
        };
        if area.step_history(redo) {
            ev.prevent_default();
            on_edit.run(());
        }
    };
    view! {
        <pre class="gutter" aria-hidden="true" node_ref=area.gutter>
            {move || {
                // Plain text runs with a span only per line in error: a
                // 50,000-line paste makes a handful of nodes, not 50,000.
                let (first, count) = area.view_lines.get();
                gutter_runs_from(first, count, &errors.get(), &warnings.get()).into_iter().map(|(mark, text)| match mark {
                    Mark::Error => view! { <span class="bad" data-testid="gutter-error">{text}</span> }.into_any(),
                    Mark::Warning => view! { <span class="warn" data-testid="gutter-warning">{text}</span> }.into_any(),
                    Mark::Plain => text.into_any(),
                }).collect_view()
            }}
        </pre>
        <textarea data-testid="yaml-editor" spellcheck="false" aria-label=super::t("panel.editor") node_ref=area.el
            on:input=move |ev| {
                area.input(&ev);
                on_edit.run(());
            }
            on:keydown=undo_key
            on:beforeinput=move |ev| {
                // The context menu's Undo and Redo.
                let kind = ev.input_type();
                if (kind == "historyUndo" || kind == "historyRedo") && area.step_history(kind == "historyRedo") {
                    ev.prevent_default();
                    on_edit.run(());
                    return;
                }
                area.before_input(&event_target::<web_sys::HtmlTextAreaElement>(&ev));
            }
            on:keyup=move |_| area.follow_caret()
            on:click=move |_| area.follow_caret()
            on:scroll=move |ev| area.scrolled(&event_target::<web_sys::HtmlTextAreaElement>(&ev))></textarea>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gutter_is_a_few_runs() {
        let bad: BTreeSet<usize> = [3, 4].into_iter().collect();
        assert_eq!(
            gutter_runs(6, &bad),
            vec![
                (Mark::Plain, "1\n2\n".to_string()),
                (Mark::Error, "3\n".to_string()),
                (Mark::Error, "4\n".to_string()),
                (Mark::Plain, "5\n6\n".to_string()),
            ]
        );
        assert_eq!(gutter_runs(50_000, &BTreeSet::new()).len(), 1);
        // A window from line 101, a warning on 103 and one on an error line.
        let warned: BTreeSet<usize> = [3, 103].into_iter().collect();
        assert_eq!(
            gutter_runs_from(100, 4, &[102].into_iter().collect(), &warned),
            vec![
                (Mark::Plain, "101\n".to_string()),
                (Mark::Error, "102\n".to_string()),
                (Mark::Warning, "103\n".to_string()),
                (Mark::Plain, "104\n".to_string()),
            ]
        );
    }
}
