//! The [`ContentSource`] trait every picture source implements, and the [`ContentError`] they report.

use std::path::{Path, PathBuf};

use crate::picture::{chroma_size, Picture};

/// Why content could not be loaded or read. File errors name the file; Y4M
/// and YUV errors also name the frame or header field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {reason}", .path.display())]
    Format { path: PathBuf, reason: String },
    #[error("{0}")]
    Invalid(String),
}

impl ContentError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ContentError + '_ {
        move |source| ContentError::Io { path: path.to_path_buf(), source }
    }

    pub(crate) fn format(path: &Path, reason: impl Into<String>) -> ContentError {
        ContentError::Format { path: path.to_path_buf(), reason: reason.into() }
    }
}

/// A random-access sequence of source pictures.
pub trait ContentSource: Send {
    /// Picture size (every frame has it).
    fn size(&self) -> (u32, u32);
    /// Native frame rate: frame `i` is shown at `i / fps` seconds.
    fn fps(&self) -> f64;
    /// Frames before the sequence repeats (files loop), `None` if endless.
    fn frame_count(&self) -> Option<u64> {
        None
    }
    /// Write frame `index` into `out`, reusing its buffers; an `out` of the
    /// wrong size is replaced. Must be a pure function of `index`.
    fn frame_into(&mut self, index: u64, out: &mut Picture);
    /// Frame `index` as a new picture.
    fn frame(&mut self, index: u64) -> Picture {
        let (w, h) = self.size();
        let mut p = Picture::new(w, h);
        self.frame_into(index, &mut p);
        p
    }
    /// One line for logs and reports.
    fn describe(&self) -> String;
}

/// Make `out` a `w`×`h` picture (keeping its buffers when it already is).
pub(crate) fn ensure_size(out: &mut Picture, w: u32, h: u32) {
    let (cw, ch) = chroma_size(w, h);
    let ok = out.width == w
        && out.height == h
        && out.y.len() == (w * h) as usize
        && out.u.len() == (cw * ch) as usize
        && out.v.len() == (cw * ch) as usize;
    if !ok {
        *out = Picture::new(w, h);
    }
}
