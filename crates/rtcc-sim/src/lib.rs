//! rtcc-sim
