//! Why bytes did not parse: each error names the structure and the field.

/// A decoding failure; never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends before the structure does.
    #[error("{what}: needs {need} bytes, has {have}")]
    Truncated { what: &'static str, need: usize, have: usize },
    /// A field holds a value its RFC does not allow.
    #[error("{what}: field {field}: {reason}")]
    Invalid { what: &'static str, field: &'static str, reason: String },
}

impl WireError {
    pub(crate) fn invalid(what: &'static str, field: &'static str, reason: impl Into<String>) -> Self {
        WireError::Invalid { what, field, reason: reason.into() }
    }

    /// `Truncated` unless `buf` holds at least `need` bytes.
    pub(crate) fn need(what: &'static str, buf: &[u8], need: usize) -> Result<(), Self> {
        if buf.len() < need {
            Err(WireError::Truncated { what, need, have: buf.len() })
        } else {
            Ok(())
        }
    }
}
