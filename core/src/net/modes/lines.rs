//! Rule listings written, or only counted: compiling needs every line's
//! number but not its text, so renderers run the same code in both modes and
//! the numbers are always the text's.

/// The lines being written, or only counted.
pub(crate) struct Lines {
    write: bool,
    lines: Vec<String>,
    n: usize,
}

impl Lines {
    pub(crate) fn new(write: bool) -> Lines {
        Lines {
            write,
            lines: Vec::new(),
            n: 0,
        }
    }

    /// Lines so far (written or counted).
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Add a line; `line` is only called when writing.
    pub(crate) fn push(&mut self, line: impl FnOnce() -> String) {
        if self.write {
            self.lines.push(line());
        }
        self.n += 1;
    }

    /// Take the written lines (empty when only counting).
    pub(crate) fn take_lines(&mut self) -> Vec<String> {
        std::mem::take(&mut self.lines)
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn counting_numbers_lines_as_writing_does() {
        let (mut w, mut c) = (Lines::new(true), Lines::new(false));
        for l in [&mut w, &mut c] {
            l.push(|| "a".into());
            l.push(|| "b".into());
        }
        assert_eq!((w.len(), c.len()), (2, 2));
        assert_eq!(w.take_lines(), vec!["a", "b"]);
        assert!(c.take_lines().is_empty());
    }
}
