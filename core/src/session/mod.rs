//! What the app and the CLI play: the packets sent replayed into traces
//! ([`replay`]) and laid out as flights ([`flights`]), guided lessons ([`lesson`]), the load-balancing and
//! scaling labs ([`lab`]), where a step's packets settle ([`settle`]), and
//! share links ([`share`]).

pub mod flights;
pub mod lab;
pub mod lesson;
pub mod replay;
pub mod settle;
pub mod share;
