//! Source pictures for real-codec runs: generated sequences and the [`ContentSource`] trait.
//!
//! Sequences are generated from photographs ([`Generated`]); file readers
//! ([`crate::y4m`]) implement the trait too.
//!
//! Every source is random-access: `frame(i)` is a pure function of the
//! source's settings and `i`. The simulator relies on that: it asks for
//! frame `i` when the encoder captures it and again, later and possibly out
//! of order, to score the picture the receiver displayed against it.
//!
//! Files: `source` (the trait and its error), `motion` (the kinds of
//! generated content), `photo` (RGB photos, PNG reading), `synthetic`
//! (procedural stand-ins for photos), `generated` (the animated sequence)
//! with its scenes `talking` and `game`, drawn with `sample` (plane
//! sampling) and `hash` (seeded randomness); `si_ti` (ITU-T P.910 SI/TI).
//! The public items are re-exported here.

mod game;
mod generated;
mod hash;
mod motion;
mod photo;
mod sample;
mod si_ti;
mod source;
mod synthetic;
mod talking;

pub use self::generated::Generated;
pub use self::motion::Motion;
pub use self::photo::{load_png, RgbImage};
pub use self::si_ti::{si, si_ti, ti};
pub(crate) use self::source::ensure_size;
pub use self::source::{ContentError, ContentSource};
pub use self::synthetic::{synthetic_photo, synthetic_portrait};
