//! What the diagram draws, as numbers and typed values: the layout in a
//! fixed logical space ([`scene`]), a trace laid along it in time
//! ([`timeline`]), each mode's pipeline of steps ([`pipeline`]), and the
//! nouns a lesson points at ([`noun`]). Never words anything.

pub mod noun;
pub mod pipeline;
pub mod scene;
pub mod timeline;
