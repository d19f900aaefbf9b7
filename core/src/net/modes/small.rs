//! A list of a rule's parts that keeps up to two inline: most of a large
//! node's rules (KUBE-SEP-, KUBE-SVC-, nft endpoint chains) have one or two
//! matches or expressions, and one heap allocation per rule was a large
//! part of compiling 100,000s of them. It reads as a slice; nothing else.

use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Small<T> {
    #[default]
    Empty,
    One([T; 1]),
    Two([T; 2]),
    Many(Vec<T>),
}

impl<T> Small<T> {
    pub fn as_slice(&self) -> &[T] {
        match self {
            Small::Empty => &[],
            Small::One(a) => a,
            Small::Two(a) => a,
            Small::Many(v) => v,
        }
    }

    pub fn push(&mut self, x: T) {
        match self {
            Small::Empty => *self = Small::One([x]),
            Small::Many(v) => v.push(x),
            _ => {
                *self = match std::mem::take(self) {
                    Small::One([a]) => Small::Two([a, x]),
                    Small::Two([a, b]) => Small::Many(vec![a, b, x]),
                    Small::Empty => Small::One([x]),
                    Small::Many(mut v) => {
                        v.push(x);
                        Small::Many(v)
                    }
                }
            }
        }
    }
}

impl<T> std::ops::Deref for Small<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T> IntoIterator for &'a Small<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T> From<Vec<T>> for Small<T> {
    fn from(mut v: Vec<T>) -> Small<T> {
        if v.len() > 2 {
            return Small::Many(v);
        }
        let mut out = Small::Empty;
        for x in v.drain(..) {
            out.push(x);
        }
        out
    }
}

impl<T> From<[T; 1]> for Small<T> {
    fn from(a: [T; 1]) -> Small<T> {
        Small::One(a)
    }
}

impl<T> From<[T; 2]> for Small<T> {
    fn from(a: [T; 2]) -> Small<T> {
        Small::Two(a)
    }
}

impl<T: Serialize> Serialize for Small<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::Small;

    #[test]
    fn pushes_and_conversions_keep_order() {
        let mut s = Small::default();
        for i in 0..5 {
            s.push(i);
            assert_eq!(s.as_slice(), (0..=i).collect::<Vec<_>>().as_slice());
        }
        assert_eq!(Small::from(vec![1, 2]).as_slice(), &[1, 2]);
        assert_eq!(Small::from(vec![7]), Small::One([7]));
        assert_eq!(Small::<u8>::from(vec![]), Small::Empty);
        assert_eq!(Small::from([3, 4]).as_slice(), &[3, 4]);
    }
}
