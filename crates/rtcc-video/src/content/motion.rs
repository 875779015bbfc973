//! [`Motion`]: the kinds of generated content (talking head, game).

use std::fmt;
use std::str::FromStr;

/// The kind of motion in generated content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Motion {
    /// A portrait with slow camera sway, a nodding head and sensor noise:
    /// low temporal information, like a video call.
    TalkingHead,
    /// Fast camera pans over a wide scene, fast bouncing sprites and a
    /// static HUD: high temporal information, like game streaming.
    Game,
}

impl Motion {
    /// `"talking-head"` or `"game"` (surrounding spaces and case ignored).
    pub fn parse(s: &str) -> Option<Motion> {
        match s.trim().to_ascii_lowercase().as_str() {
            "talking-head" => Some(Motion::TalkingHead),
            "game" => Some(Motion::Game),
            _ => None,
        }
    }

    /// The name [`Motion::parse`] accepts.
    pub fn name(self) -> &'static str {
        match self {
            Motion::TalkingHead => "talking-head",
            Motion::Game => "game",
        }
    }
}

impl fmt::Display for Motion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Motion {
    type Err = String;
    fn from_str(s: &str) -> Result<Motion, String> {
        Motion::parse(s).ok_or_else(|| format!("'{s}' is not one of talking-head, game"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motion_parses_and_prints() {
        assert_eq!(Motion::parse("talking-head"), Some(Motion::TalkingHead));
        assert_eq!(Motion::parse(" Game "), Some(Motion::Game));
        assert_eq!(Motion::parse("gaming"), None);
        assert_eq!("game".parse::<Motion>(), Ok(Motion::Game));
        assert!("x".parse::<Motion>().unwrap_err().contains("talking-head"));
        for m in [Motion::TalkingHead, Motion::Game] {
            assert_eq!(Motion::parse(&m.to_string()), Some(m));
        }
    }
}
