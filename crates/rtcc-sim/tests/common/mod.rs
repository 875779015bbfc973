//! What the scenario tests share: one-link scenario text, running it, and
//! reading its tables.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use rtcc_sim::metrics::{Column, Table};
use rtcc_sim::{run_text, Output};

/// A scenario over one link, 25 ms one-way delay unless `delay` says
/// otherwise (the Dumbo thesis's setup); parts are TOML lines.
#[derive(Clone, Debug)]
pub struct Call {
    top: String,
    capacity: String,
    delay: String,
    link: String,
    flows: String,
}

impl Call {
    /// `duration` long over a link of `capacity`, a TOML value: `"\"3Mbps\""`
    /// or a table such as a pulse.
    pub fn new(duration: &str, capacity: &str) -> Call {
        Call {
            top: format!("duration = \"{duration}\"\n"),
            capacity: capacity.to_string(),
            delay: "25ms".into(),
            link: String::new(),
            flows: String::new(),
        }
    }

    /// `model_timing = "exact"`: every camera on the exact grid, frames
    /// encoded at once, exact pacer wake-ups, for tests of arithmetic that
    /// realistic timing would blur.
    pub fn exact(mut self) -> Call {
        self.top += "model_timing = \"exact\"\n";
        self
    }

    pub fn seed(mut self, seed: u64) -> Call {
        self.top += &format!("seed = {seed}\n");
        self
    }

    pub fn delay(mut self, delay: &str) -> Call {
        self.delay = delay.into();
        self
    }

    /// More `[link]` lines: loss, queue, jitter.
    pub fn link(mut self, lines: &str) -> Call {
        self.link += lines;
        self.link += "\n";
        self
    }

    /// One `[[flow]]` of `lines`.
    pub fn flow(mut self, lines: &str) -> Call {
        self.flows += &format!("[[flow]]\n{lines}\n");
        self
    }

    /// A flow at a fixed `rate` with the ideal encoder, then `lines`.
    /// A smooth constant-rate source: paced at the rate itself, not at
    /// `fixed`'s default 2.5 × (libwebrtc's pacer), so the physics is exact.
    pub fn fixed(self, rate: &str, lines: &str) -> Call {
        self.flow(&format!(
            "controller = {{ name = \"fixed\", rate = \"{rate}\", pacing_factor = 1 }}\nencoder = \"ideal\"\n{lines}"
        ))
    }

    pub fn text(&self) -> String {
        let Call { top, capacity, delay, link, flows } = self;
        format!("{top}[link]\ncapacity = {capacity}\ndelay = \"{delay}\"\n{link}{flows}")
    }

    pub fn run(&self) -> Output {
        run(&self.text())
    }
}

/// Runs scenario `text`; a refused or failed run fails the test with its reason.
pub fn run(text: &str) -> Output {
    run_text(text, "test.toml", None).unwrap_or_else(|e| panic!("{e}"))
}

pub fn f64s<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    t.f64(name).unwrap_or_else(|| panic!("no column {name}"))
}

pub fn i64s<'a>(t: &'a Table, name: &str) -> &'a [i64] {
    match t.get(name) {
        Some(Column::I64(v)) => v,
        _ => panic!("no i64 column {name}"),
    }
}

pub fn u8s<'a>(t: &'a Table, name: &str) -> &'a [u8] {
    match t.get(name) {
        Some(Column::U8(v)) => v,
        _ => panic!("no u8 column {name}"),
    }
}
