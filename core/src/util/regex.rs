//! A small regular-expression engine for the patterns nginx evaluates in
//! ingress-nginx's `location ~*` blocks and `rewrite` directives: PCRE's
//! syntax, matched byte by byte (nginx compiles them without UTF mode).
//!
//! Read: literals, `.`, classes with ranges, negation and POSIX names
//! (`[[:alnum:]]`), `\d \w \s` and their negations, `\xHH`, groups
//! (capturing, named, `(?:…)`), alternation, the greedy and lazy
//! quantifiers `* + ? {n} {n,} {n,m}`, the anchors `^ $`, and the inline
//! flags `(?i)`, `(?-i)`, `(?i:…)`. Refused as unsupported (so a caller can
//! say so rather than guess): lookaround, back-references, possessive
//! quantifiers and the other escapes.
//!
//! Matching is a bounded backtracker: it reports the leftmost-first match
//! PCRE reports, and tries each (instruction, position) at most once, so
//! time is linear in pattern size × text length. Pure; never panics.

/// The most program instructions a pattern may compile to.
const MAX_PROGRAM: usize = 4_000;
/// The most (instruction, position) states one match may visit.
const MAX_STATES: usize = 1 << 24;

/// What is wrong with a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// PCRE refuses it too (nginx would not load the configuration).
    Invalid(&'static str),
    /// PCRE reads it; this engine does not.
    Unsupported(&'static str),
    /// It compiles to more than [`MAX_PROGRAM`] instructions.
    TooBig,
}

/// A pattern's problem and the byte offset where it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegexError {
    pub at: usize,
    pub problem: Problem,
}

impl std::fmt::Display for RegexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.problem {
            Problem::Invalid(w) => write!(f, "{w} at offset {}", self.at),
            Problem::Unsupported(w) => write!(f, "{w} (offset {}) is not supported", self.at),
            Problem::TooBig => write!(f, "the pattern is too large"),
        }
    }
}

/// A set of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Set([u64; 4]);

impl Set {
    fn add(&mut self, b: u8) {
        if let Some(w) = self.0.get_mut(usize::from(b >> 6)) {
            *w |= 1u64 << (b & 63);
        }
    }
    fn add_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.add(b);
        }
    }
    fn has(&self, b: u8) -> bool {
        self.0
            .get(usize::from(b >> 6))
            .is_some_and(|w| w & (1u64 << (b & 63)) != 0)
    }
    fn union(&mut self, o: &Set) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
    }
    fn negate(&mut self) {
        for w in &mut self.0 {
            *w = !*w;
        }
    }
    /// Add the other case of every ASCII letter in the set.
    fn fold(&mut self) {
        for b in b'a'..=b'z' {
            let up = b.to_ascii_uppercase();
            if self.has(b) || self.has(up) {
                self.add(b);
                self.add(up);
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Empty,
    Set(Set),
    Start,
    End,
    Group(Box<Node>, Option<usize>),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Inst {
    Set(Set),
    Split(usize, usize),
    Jmp(usize),
    Save(usize),
    Start,
    End,
    Match,
}

/// A compiled pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regex {
    prog: Vec<Inst>,
    groups: usize,
}

/// Group 0 (the whole match) and each capturing group: its byte range in
/// the text, `None` when it did not take part.
pub type Captures = Vec<Option<(usize, usize)>>;

impl Regex {
    /// Compile `pattern`; `caseless` as nginx's `~*` (ASCII letters).
    pub fn new(pattern: &str, caseless: bool) -> Result<Regex, RegexError> {
        let mut p = Parser {
            s: pattern.as_bytes(),
            i: 0,
            ci: caseless,
            groups: 0,
            depth: 0,
        };
        let node = p.alt()?;
        if p.i < p.s.len() {
            return Err(p.err(Problem::Invalid("unmatched )")));
        }
        let mut c = Compiler { prog: Vec::new() };
        c.push(Inst::Save(0))?;
        c.node(&node)?;
        c.push(Inst::Save(1))?;
        c.push(Inst::Match)?;
        Ok(Regex {
            prog: c.prog,
            groups: p.groups,
        })
    }

    /// The number of capturing groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Would matching `text` stay within the engine's state budget?
    pub fn fits(&self, text: &[u8]) -> bool {
        self.prog
            .len()
            .checked_mul(text.len().saturating_add(1))
            .is_some_and(|n| n <= MAX_STATES)
    }

    /// The leftmost-first match in `text` (only at offset 0 when
    /// `anchored`), or `None`; `None` too when `text` does not [`fits`](Self::fits).
    pub fn captures(&self, text: &[u8], anchored: bool) -> Option<Captures> {
        if !self.fits(text) {
            return None;
        }
        let width = text.len().saturating_add(1);
        let mut seen = vec![0u64; (self.prog.len() * width).div_ceil(64)];
        let slots_len = self.groups.saturating_add(1).saturating_mul(2);
        let last = if anchored { 0 } else { text.len() };
        for start in 0..=last {
            let mut slots: Vec<Option<usize>> = vec![None; slots_len];
            let mut stack = vec![Job::Run(0, start)];
            while let Some(job) = stack.pop() {
                let (mut pc, mut pos) = match job {
                    Job::Restore(slot, old) => {
                        if let Some(s) = slots.get_mut(slot) {
                            *s = old;
                        }
                        continue;
                    }
                    Job::Run(pc, pos) => (pc, pos),
                };
                loop {
                    let key = pc * width + pos;
                    let Some(word) = seen.get_mut(key / 64) else {
                        break;
                    };
                    if *word & (1u64 << (key % 64)) != 0 {
                        break;
                    }
                    *word |= 1u64 << (key % 64);
                    match self.prog.get(pc) {
                        Some(Inst::Set(set)) => match text.get(pos) {
                            Some(&b) if set.has(b) => {
                                pc += 1;
                                pos += 1;
                            }
                            _ => break,
                        },
                        Some(Inst::Split(a, b)) => {
                            stack.push(Job::Run(*b, pos));
                            pc = *a;
                        }
                        Some(Inst::Jmp(a)) => pc = *a,
                        Some(Inst::Save(s)) => {
                            if let Some(slot) = slots.get_mut(*s) {
                                stack.push(Job::Restore(*s, *slot));
                                *slot = Some(pos);
                            }
                            pc += 1;
                        }
                        Some(Inst::Start) if pos == 0 => pc += 1,
                        Some(Inst::End)
                            if pos == text.len()
                                || (pos + 1 == text.len() && text.get(pos) == Some(&b'\n')) =>
                        {
                            pc += 1
                        }
                        Some(Inst::Match) => {
                            return Some(
                                slots
                                    .chunks(2)
                                    .map(|c| match c {
                                        [Some(a), Some(b)] if a <= b => Some((*a, *b)),
                                        _ => None,
                                    })
                                    .collect(),
                            );
                        }
                        _ => break,
                    }
                }
            }
        }
        None
    }

    /// Does the pattern match anywhere in `text` (at its start when
    /// `anchored`)?
    pub fn is_match(&self, text: &[u8], anchored: bool) -> bool {
        self.captures(text, anchored).is_some()
    }
}

enum Job {
    Run(usize, usize),
    Restore(usize, Option<usize>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    ci: bool,
    groups: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, problem: Problem) -> RegexError {
        RegexError {
            at: self.i,
            problem,
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, prefix: &[u8]) -> bool {
        let yes = self.s.get(self.i..).is_some_and(|r| r.starts_with(prefix));
        if yes {
            self.i += prefix.len();
        }
        yes
    }

    fn alt(&mut self) -> Result<Node, RegexError> {
        let outer = self.ci;
        let mut arms = vec![self.concat()?];
        while self.eat(b"|") {
            arms.push(self.concat()?);
        }
        self.ci = outer;
        Ok(if arms.len() == 1 {
            arms.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(arms)
        })
    }

    fn concat(&mut self) -> Result<Node, RegexError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            let Some(atom) = self.atom()? else {
                continue;
            };
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Ok(Node::Concat(items))
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, RegexError> {
        let at = self.i;
        let (min, max) = match self.peek() {
            Some(b'*') => (0, None),
            Some(b'+') => (1, None),
            Some(b'?') => (0, Some(1)),
            Some(b'{') => match self.counted() {
                Some((min, max, len)) => {
                    self.i += len - 1;
                    (min, max)
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        self.i += 1;
        if max.is_some_and(|m| m < min) {
            self.i = at;
            return Err(self.err(Problem::Invalid("numbers out of order in {} quantifier")));
        }
        let greedy = !self.eat(b"?");
        if self.peek() == Some(b'+') {
            return Err(self.err(Problem::Unsupported("a possessive quantifier")));
        }
        if matches!(self.peek(), Some(b'*' | b'+' | b'?')) || self.counted().is_some() {
            return Err(self.err(Problem::Invalid("nothing to repeat")));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    /// `{n}`, `{n,}` or `{n,m}` at the cursor: (min, max, length in bytes).
    fn counted(&self) -> Option<(u32, Option<u32>, usize)> {
        let rest = self.s.get(self.i..)?;
        let close = rest.iter().position(|&b| b == b'}')?;
        let body = std::str::from_utf8(rest.get(1..close)?).ok()?;
        let num = |t: &str| -> Option<u32> {
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
                .filter(|n| *n <= 1000)
        };
        let (min, max) = match body.split_once(',') {
            None => (num(body)?, Some(num(body)?)),
            Some((a, "")) => (num(a)?, None),
            Some((a, b)) => (num(a)?, Some(num(b)?)),
        };
        Some((min, max, close + 1))
    }

    fn literal(&self, b: u8) -> Node {
        let mut s = Set::default();
        s.add(b);
        if self.ci {
            s.fold();
        }
        Node::Set(s)
    }

    /// One atom, or `None` for an inline flag that matched nothing.
    fn atom(&mut self) -> Result<Option<Node>, RegexError> {
        let Some(c) = self.peek() else {
            return Ok(Some(Node::Empty));
        };
        match c {
            b'*' | b'+' | b'?' => Err(self.err(Problem::Invalid("nothing to repeat"))),
            b'{' if self.counted().is_some() => {
                Err(self.err(Problem::Invalid("nothing to repeat")))
            }
            b'(' => self.group(),
            b'[' => {
                self.i += 1;
                self.class().map(|s| Some(Node::Set(s)))
            }
            b'.' => {
                self.i += 1;
                let mut s = Set::default();
                s.add_range(0, 255);
                s.0[0] &= !(1u64 << b'\n');
                Ok(Some(Node::Set(s)))
            }
            b'^' => {
                self.i += 1;
                Ok(Some(Node::Start))
            }
            b'$' => {
                self.i += 1;
                Ok(Some(Node::End))
            }
            b'\\' => {
                self.i += 1;
                let mut s = self.escape(false)?;
                if self.ci {
                    s.fold();
                }
                Ok(Some(Node::Set(s)))
            }
            _ => {
                self.i += 1;
                Ok(Some(self.literal(c)))
            }
        }
    }

    fn group(&mut self) -> Result<Option<Node>, RegexError> {
        let open = self.i;
        self.i += 1;
        let mut capture = None;
        let outer = self.ci;
        if self.eat(b"?") {
            if self.eat(b"i)") {
                self.ci = true;
                return Ok(None);
            }
            if self.eat(b"-i)") {
                self.ci = false;
                return Ok(None);
            }
            if self.eat(b"i:") {
                self.ci = true;
            } else if self.eat(b"-i:") {
                self.ci = false;
            } else if self.eat(b":") {
            } else if self.eat(b"P<") || self.eat(b"<") && !matches!(self.peek(), Some(b'=' | b'!'))
            {
                let end = self
                    .s
                    .get(self.i..)
                    .and_then(|r| r.iter().position(|&b| b == b'>'));
                let Some(end) = end else {
                    return Err(self.err(Problem::Invalid("missing > after a group name")));
                };
                self.i += end + 1;
                self.groups += 1;
                capture = Some(self.groups);
            } else if matches!(self.peek(), Some(b'=' | b'!' | b'<')) {
                self.i = open;
                return Err(self.err(Problem::Unsupported("a lookaround assertion")));
            } else {
                self.i = open;
                return Err(self.err(Problem::Unsupported("this group syntax")));
            }
        } else {
            self.groups += 1;
            capture = Some(self.groups);
        }
        self.depth += 1;
        if self.depth > 100 {
            return Err(self.err(Problem::TooBig));
        }
        let inner = self.alt()?;
        self.depth -= 1;
        self.ci = outer;
        if !self.eat(b")") {
            self.i = open;
            return Err(self.err(Problem::Invalid("missing )")));
        }
        Ok(Some(Node::Group(Box::new(inner), capture)))
    }

    /// After a `\`: the bytes it stands for (`in_class`: inside `[…]`).
    fn escape(&mut self, in_class: bool) -> Result<Set, RegexError> {
        let Some(c) = self.peek() else {
            return Err(self.err(Problem::Invalid("\\ at end of pattern")));
        };
        self.i += 1;
        let mut s = Set::default();
        match c {
            b'd' | b'D' => s.add_range(b'0', b'9'),
            b'w' | b'W' => {
                s.add_range(b'0', b'9');
                s.add_range(b'a', b'z');
                s.add_range(b'A', b'Z');
                s.add(b'_');
            }
            b's' | b'S' => {
                for b in [b' ', b'\t', b'\n', b'\r', 0x0b, 0x0c] {
                    s.add(b);
                }
            }
            b'n' => s.add(b'\n'),
            b't' => s.add(b'\t'),
            b'r' => s.add(b'\r'),
            b'f' => s.add(0x0c),
            b'e' => s.add(0x1b),
            b'x' => {
                let hex = self
                    .s
                    .get(self.i..self.i.saturating_add(2))
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                let Some(v) = hex else {
                    return Err(self.err(Problem::Unsupported("this \\x form")));
                };
                self.i += 2;
                s.add(v);
            }
            b'b' if in_class => s.add(0x08),
            b'1'..=b'9' => {
                self.i -= 1;
                return Err(self.err(Problem::Unsupported("a back-reference")));
            }
            c if c.is_ascii_alphanumeric() => {
                self.i -= 1;
                return Err(self.err(Problem::Unsupported("this escape")));
            }
            c => s.add(c),
        }
        if c.is_ascii_uppercase() && matches!(c, b'D' | b'W' | b'S') {
            s.negate();
        }
        Ok(s)
    }

    /// After a `[`: the class up to its `]`.
    fn class(&mut self) -> Result<Set, RegexError> {
        let open = self.i.saturating_sub(1);
        let negated = self.eat(b"^");
        let mut s = Set::default();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                self.i = open;
                return Err(self.err(Problem::Invalid("missing terminating ] for a class")));
            };
            if c == b']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            if self.eat(b"[:") {
                let rest = self.s.get(self.i..).unwrap_or_default();
                let Some(end) = rest.windows(2).position(|w| w == b":]") else {
                    return Err(self.err(Problem::Invalid("unknown POSIX class name")));
                };
                let name = rest.get(..end).unwrap_or_default();
                s.union(
                    &posix(name)
                        .ok_or_else(|| self.err(Problem::Invalid("unknown POSIX class name")))?,
                );
                self.i += end + 2;
                continue;
            }
            let lo = if c == b'\\' {
                self.i += 1;
                let e = self.escape(true)?;
                match single(&e) {
                    Some(b) => b,
                    None => {
                        s.union(&e);
                        continue;
                    }
                }
            } else {
                self.i += 1;
                c
            };
            let range =
                self.peek() == Some(b'-') && self.s.get(self.i + 1).is_some_and(|&n| n != b']');
            if !range {
                s.add(lo);
                continue;
            }
            self.i += 1;
            let hi = match self.peek() {
                Some(b'\\') => {
                    self.i += 1;
                    let e = self.escape(true)?;
                    let Some(b) = single(&e) else {
                        return Err(self.err(Problem::Invalid("invalid range in a class")));
                    };
                    b
                }
                Some(h) => {
                    self.i += 1;
                    h
                }
                None => continue,
            };
            if hi < lo {
                return Err(self.err(Problem::Invalid("range out of order in a class")));
            }
            s.add_range(lo, hi);
        }
        if self.ci {
            s.fold();
        }
        if negated {
            s.negate();
        }
        Ok(s)
    }
}

/// The one byte a set holds, if it holds exactly one.
fn single(s: &Set) -> Option<u8> {
    let mut found = None;
    for b in 0..=255u8 {
        if s.has(b) {
            if found.is_some() {
                return None;
            }
            found = Some(b);
        }
    }
    found
}

fn posix(name: &[u8]) -> Option<Set> {
    let mut s = Set::default();
    match name {
        b"alnum" => {
            s.add_range(b'0', b'9');
            s.add_range(b'a', b'z');
            s.add_range(b'A', b'Z');
        }
        b"alpha" => {
            s.add_range(b'a', b'z');
            s.add_range(b'A', b'Z');
        }
        b"digit" => s.add_range(b'0', b'9'),
        b"lower" => s.add_range(b'a', b'z'),
        b"upper" => s.add_range(b'A', b'Z'),
        b"xdigit" => {
            s.add_range(b'0', b'9');
            s.add_range(b'a', b'f');
            s.add_range(b'A', b'F');
        }
        b"space" => {
            for b in [b' ', b'\t', b'\n', b'\r', 0x0b, 0x0c] {
                s.add(b);
            }
        }
        b"word" => {
            s.add_range(b'0', b'9');
            s.add_range(b'a', b'z');
            s.add_range(b'A', b'Z');
            s.add(b'_');
        }
        _ => return None,
    }
    Some(s)
}

struct Compiler {
    prog: Vec<Inst>,
}

impl Compiler {
    fn push(&mut self, i: Inst) -> Result<usize, RegexError> {
        if self.prog.len() >= MAX_PROGRAM {
            return Err(RegexError {
                at: 0,
                problem: Problem::TooBig,
            });
        }
        self.prog.push(i);
        Ok(self.prog.len() - 1)
    }

    fn patch(&mut self, at: usize, i: Inst) {
        if let Some(x) = self.prog.get_mut(at) {
            *x = i;
        }
    }

    fn node(&mut self, n: &Node) -> Result<(), RegexError> {
        match n {
            Node::Empty => {}
            Node::Set(s) => {
                self.push(Inst::Set(*s))?;
            }
            Node::Start => {
                self.push(Inst::Start)?;
            }
            Node::End => {
                self.push(Inst::End)?;
            }
            Node::Group(inner, capture) => {
                if let Some(g) = capture {
                    self.push(Inst::Save(g * 2))?;
                    self.node(inner)?;
                    self.push(Inst::Save(g * 2 + 1))?;
                } else {
                    self.node(inner)?;
                }
            }
            Node::Concat(items) => {
                for i in items {
                    self.node(i)?;
                }
            }
            Node::Alt(arms) => {
                let mut jumps = Vec::new();
                for (k, arm) in arms.iter().enumerate() {
                    if k + 1 == arms.len() {
                        self.node(arm)?;
                        break;
                    }
                    let split = self.push(Inst::Split(0, 0))?;
                    self.node(arm)?;
                    jumps.push(self.push(Inst::Jmp(0))?);
                    let next = self.prog.len();
                    self.patch(split, Inst::Split(split + 1, next));
                }
                let end = self.prog.len();
                for j in jumps {
                    self.patch(j, Inst::Jmp(end));
                }
            }
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } => self.repeat(node, *min, *max, *greedy)?,
        }
        Ok(())
    }

    fn split(&mut self, at: usize, body: usize, out: usize, greedy: bool) {
        let i = if greedy {
            Inst::Split(body, out)
        } else {
            Inst::Split(out, body)
        };
        self.patch(at, i);
    }

    fn repeat(
        &mut self,
        n: &Node,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    ) -> Result<(), RegexError> {
        for _ in 0..min {
            self.node(n)?;
        }
        match max {
            None => {
                let top = self.push(Inst::Split(0, 0))?;
                self.node(n)?;
                self.push(Inst::Jmp(top))?;
                let out = self.prog.len();
                self.split(top, top + 1, out, greedy);
            }
            Some(max) => {
                let mut splits = Vec::new();
                for _ in min..max {
                    splits.push(self.push(Inst::Split(0, 0))?);
                    self.node(n)?;
                }
                let out = self.prog.len();
                for s in splits {
                    self.split(s, s + 1, out, greedy);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(p: &str, ci: bool, text: &str, anchored: bool) -> Option<Vec<Option<String>>> {
        let r = Regex::new(p, ci).map_err(|e| format!("{p}: {e}")).ok()?;
        r.captures(text.as_bytes(), anchored).map(|c| {
            c.iter()
                .map(|g| g.and_then(|(a, b)| text.get(a..b)).map(str::to_string))
                .collect()
        })
    }

    fn whole(p: &str, text: &str) -> Option<String> {
        caps(p, false, text, false).and_then(|c| c.into_iter().next().flatten())
    }

    /// Leftmost-first as PCRE reports it: greedy and lazy quantifiers,
    /// alternation in order, classes, anchors, counted repeats.
    #[test]
    fn matches_as_pcre_reports() {
        for (p, text, want) in [
            ("a+", "baaa", Some("aaa")),
            ("a+?", "baaa", Some("a")),
            ("a|ab", "ab", Some("a")),
            ("ab|a", "ab", Some("ab")),
            ("^/foo", "/foobar", Some("/foo")),
            ("^/foo", "x/foo", None),
            ("/foo$", "/a/foo", Some("/foo")),
            ("/foo$", "/foo\n", Some("/foo")),
            ("/foo$", "/foo/", None),
            ("[a-c]{2,3}", "xabcd", Some("abc")),
            ("[a-c]{2}", "xabcd", Some("ab")),
            ("[a-c]{2,}?", "xabcd", Some("ab")),
            ("[^/]+", "/ab/c", Some("ab")),
            ("\\d+\\.\\d", "v12.5x", Some("12.5")),
            ("[[:alnum:]_-]+", "/x_y-z/", Some("x_y-z")),
            ("a{,2}", "a{,2}", Some("a{,2}")),
            ("x*", "abc", Some("")),
            ("(a*)*b", "aaab", Some("aaab")),
            ("[]a]+", "]a]b", Some("]a]")),
            ("[a-]+", "-a-b", Some("-a-")),
            ("\\x41", "zA", Some("A")),
            (".", "\n", None),
        ] {
            assert_eq!(whole(p, text).as_deref(), want, "{p} on {text:?}");
        }
    }

    /// The ingress-nginx documentation's rewrite example's groups.
    #[test]
    fn groups_capture_as_numbered() {
        let g = caps("/something(/|$)(.*)", true, "/something/new", false);
        assert_eq!(
            g,
            Some(vec![
                Some("/something/new".into()),
                Some("/".into()),
                Some("new".into())
            ])
        );
        let g = caps("/something(/|$)(.*)", true, "/SOMETHING", false);
        assert_eq!(
            g,
            Some(vec![
                Some("/SOMETHING".into()),
                Some("".into()),
                Some("".into())
            ])
        );
        // A group that took no part is unset; a named group is numbered.
        let g = caps("(a)|(?P<n>b)", false, "b", false);
        assert_eq!(g, Some(vec![Some("b".into()), None, Some("b".into())]));
        let g = caps("(?:x)(y)", false, "xy", true);
        assert_eq!(g, Some(vec![Some("xy".into()), Some("y".into())]));
    }

    #[test]
    fn case_folds_only_when_asked() {
        assert!(caps("^/API", true, "/api/x", true).is_some());
        assert!(caps("^/API", false, "/api/x", true).is_none());
        assert!(caps("(?i)^/API", false, "/api", true).is_some());
        assert!(caps("^/(?i:A)B", false, "/ab", true).is_none());
        assert!(caps("^/(?i:A)B", false, "/aB", true).is_some());
        assert!(caps("[A-Z]+", true, "abc", true).is_some());
        assert!(caps("[^a]", true, "A", true).is_none());
    }

    #[test]
    fn refuses_what_pcre_refuses_and_names_what_it_cannot_read() {
        for (p, want) in [
            ("/a(b", Problem::Invalid("missing )")),
            ("/a)b", Problem::Invalid("unmatched )")),
            ("*a", Problem::Invalid("nothing to repeat")),
            ("a**", Problem::Invalid("nothing to repeat")),
            ("[b-a]", Problem::Invalid("range out of order in a class")),
            ("[ab", Problem::Invalid("missing terminating ] for a class")),
            (
                "a{3,2}",
                Problem::Invalid("numbers out of order in {} quantifier"),
            ),
            ("a(?=b)", Problem::Unsupported("a lookaround assertion")),
            ("(?<!a)b", Problem::Unsupported("a lookaround assertion")),
            ("(a)\\1", Problem::Unsupported("a back-reference")),
            ("a++", Problem::Unsupported("a possessive quantifier")),
            ("\\bx", Problem::Unsupported("this escape")),
        ] {
            assert_eq!(
                Regex::new(p, false).map(|_| ()).map_err(|e| e.problem),
                Err(want),
                "{p}"
            );
        }
        assert_eq!(
            Regex::new("(a{1000}){1000}", false).map_err(|e| e.problem),
            Err(Problem::TooBig)
        );
    }

    proptest::proptest! {
        /// Any pattern of the metacharacters either compiles or is refused
        /// with an offset inside it; a match's groups lie inside the text,
        /// start before they end, and group 0 starts at 0 when anchored.
        #[test]
        fn any_pattern_compiles_or_is_refused(
            pattern in "[a-c()|*+?{}0-9,\\[\\]^$.:=!<>P-]{0,24}",
            text in "[a-c/{}0-9]{0,24}",
            ci in proptest::bool::ANY,
            anchored in proptest::bool::ANY,
        ) {
            match Regex::new(&pattern, ci) {
                Err(e) => proptest::prop_assert!(e.at <= pattern.len()),
                Ok(r) => {
                    if let Some(c) = r.captures(text.as_bytes(), anchored) {
                        proptest::prop_assert_eq!(c.len(), r.groups() + 1);
                        for (a, b) in c.iter().flatten() {
                            proptest::prop_assert!(a <= b && *b <= text.len());
                        }
                        if anchored {
                            proptest::prop_assert_eq!(c.first().copied().flatten().map(|g| g.0), Some(0));
                        }
                    }
                }
            }
        }
    }

    /// Each (instruction, position) is tried once: a pattern that takes
    /// exponential time in a plain backtracker ends at once.
    #[test]
    fn nested_quantifiers_stay_linear() {
        let r = Regex::new("^(a+)+$", false);
        let text = format!("{}b", "a".repeat(5_000));
        assert_eq!(r.map(|r| r.is_match(text.as_bytes(), false)), Ok(false));
    }
}
